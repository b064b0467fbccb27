// Copyright (c) edge-outbox authors.

#include "agent/send/webhook_request.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "webhooks/signature.h"

namespace outbox {

HttpRequest BuildRequest(const PendingEvent& event,
                         const Destination& destination, absl::Time now,
                         uint64_t tag) {
  RequestParts parts;
  parts.id = event.id;
  parts.type = event.type;
  parts.content_type = event.content_type;
  parts.url = destination.url;
  parts.body = event.payload;
  return BuildRequestFrom(std::move(parts), destination, now, tag);
}

HttpRequest BuildRequestFrom(RequestParts parts, const Destination& destination,
                             absl::Time now, uint64_t tag) {
  HttpRequest request;
  request.tag = tag;
  request.url = std::move(parts.url);
  request.method = std::move(parts.method);
  request.body = std::move(parts.body);
  request.connect_timeout = destination.connect_timeout;
  request.total_timeout = destination.timeout;
  request.tls = destination.tls;
  request.proxy = destination.proxy;
  // The timestamp is the time of this attempt, as the spec asks: receivers
  // reject old timestamps to stop replays, so a retry must not carry the
  // first attempt's.
  const int64_t timestamp = absl::ToUnixSeconds(now);
  auto& h = request.headers;
  h.emplace_back("Content-Type", parts.content_type.empty()
                                     ? "application/octet-stream"
                                     : parts.content_type);
  h.emplace_back(std::string(kWebhookIdHeader), parts.id);
  h.emplace_back(std::string(kWebhookTimestampHeader), absl::StrCat(timestamp));
  if (!destination.secrets.empty()) {
    h.emplace_back(std::string(kWebhookSignatureHeader),
                   SignatureHeader(destination.secrets, parts.id, timestamp,
                                   request.body));
  }
  h.emplace_back("Idempotency-Key", parts.id);
  if (!parts.type.empty()) h.emplace_back(kEventTypeHeader, parts.type);
  for (auto& header : parts.headers) h.push_back(std::move(header));
  for (const auto& header : destination.headers) h.push_back(header);
  if (parts.coding != BodyCoding::kIdentity) {
    // Only out of memory fails here; the body then goes as it is, which a
    // receiver reads all the same.
    absl::StatusOr<std::string> encoded =
        EncodeBody(parts.coding, request.body);
    if (encoded.ok()) {
      request.body = *std::move(encoded);
      h.emplace_back("Content-Encoding",
                     std::string(BodyCodingName(parts.coding)));
    }
  }
  return request;
}

}  // namespace outbox
