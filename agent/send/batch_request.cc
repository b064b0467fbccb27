// Copyright (c) edge-outbox authors.

#include "agent/send/batch_request.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/send/webhook_request.h"
#include "nlohmann/json.hpp"

namespace outbox {
namespace {

constexpr size_t kBatchIdHexDigits = 32;

std::vector<std::string> IdsOf(const std::vector<const PendingEvent*>& events) {
  std::vector<std::string> ids;
  ids.reserve(events.size());
  for (const PendingEvent* event : events) ids.push_back(event->id);
  return ids;
}

}  // namespace

std::string BatchId(absl::Span<const std::string> ids) {
  const std::string joined = absl::StrJoin(ids, "\n");
  unsigned char digest[SHA256_DIGEST_LENGTH];
  if (SHA256(reinterpret_cast<const unsigned char*>(joined.data()),
             joined.size(), digest) == nullptr) {
    // As in expr/step_id.cc: only a broken OpenSSL fails a one-shot
    // digest, and an id not derived from the events would defeat the
    // receiver's deduplication, so stop here.
    std::fprintf(stderr, "outbox: SHA-256 failed in OpenSSL\n");
    std::abort();
  }
  const std::string hex = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
  return absl::StrCat("batch_", hex.substr(0, kBatchIdHexDigits));
}

std::string BatchLine(const PendingEvent& event) {
  nlohmann::ordered_json line = {{"id", event.id}, {"type", event.type}};
  if (!event.ordering_key.empty()) line["ordering_key"] = event.ordering_key;
  line["content_type"] = event.content_type;
  line["data"] = event.payload;
  // nlohmann checks UTF-8 while it escapes, so one pass over the payload
  // both prints it and finds out whether a JSON string can carry it.
  // (tools/json_bytes.h does the same for the tools, but the installed agent
  // library cannot depend on tools/.)
  try {
    return line.dump() + "\n";
  } catch (const nlohmann::json::type_error&) {
    // Not UTF-8 (type_error 316): sent as base64 below.
  }
  line.erase("data");
  line["data_base64"] = absl::Base64Escape(event.payload);
  // The payload is ASCII now; a bad byte left is in another field, which
  // the receiver reads as text anyway: replaced, not thrown.
  return line.dump(-1, ' ', false,
                   nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

size_t LinesThatFit(absl::Span<const std::string> lines, size_t held_events,
                    size_t held_bytes, size_t max_events, size_t max_bytes) {
  max_events = std::max<size_t>(max_events, 1);
  size_t bytes = held_bytes;
  size_t n = 0;
  for (; n < lines.size() && held_events + n < max_events; ++n) {
    bytes += lines[n].size();
    if (bytes > max_bytes && held_events + n > 0) break;
  }
  return n;
}

HttpRequest BuildBatchRequest(const std::vector<const PendingEvent*>& events,
                              std::string body, const Destination& destination,
                              absl::Time now, uint64_t tag) {
  const std::vector<std::string> ids = IdsOf(events);
  RequestParts parts;
  parts.id = BatchId(ids);
  parts.content_type = kBatchContentType;
  parts.url = destination.url;
  parts.body = std::move(body);
  parts.coding = destination.batch.compression;
  parts.headers.emplace_back(kBatchEventIdsHeader, absl::StrJoin(ids, ","));
  parts.headers.emplace_back(kBatchSizeHeader, absl::StrCat(ids.size()));
  // parts.type stays empty: no x-event-type, the events' types differ.
  return BuildRequestFrom(std::move(parts), destination, now, tag);
}

}  // namespace outbox
