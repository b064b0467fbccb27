// Copyright (c) edge-outbox authors.

#include "tools/sink/batch_body.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace outbox::sink {
namespace {

constexpr absl::string_view kNdjson = "application/x-ndjson";

absl::Status BadLine(size_t number, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("batch line ", number, ": ", why));
}

// Member `key` of `object` if it is a string.
bool StringMember(const nlohmann::json& object, const char* key,
                  std::string* out) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return false;
  *out = it->get<std::string>();
  return true;
}

// The payload: "data" as text or "data_base64" decoded, exactly one.
absl::Status ReadData(const nlohmann::json& object, size_t number,
                      std::string* out) {
  const bool text = object.contains("data");
  const bool base64 = object.contains("data_base64");
  if (text == base64) {
    return BadLine(number, "want exactly one of \"data\" and \"data_base64\"");
  }
  std::string value;
  if (!StringMember(object, text ? "data" : "data_base64", &value)) {
    return BadLine(number, "the data is not a string");
  }
  if (text) {
    *out = std::move(value);
  } else if (!absl::Base64Unescape(value, out)) {
    return BadLine(number, "\"data_base64\" is not base64");
  }
  return absl::OkStatus();
}

absl::StatusOr<BatchEvent> ParseLine(absl::string_view line, size_t number) {
  const nlohmann::json object = nlohmann::json::parse(line, nullptr, false);
  if (object.is_discarded() || !object.is_object()) {
    return BadLine(number, "not a JSON object");
  }
  BatchEvent event;
  if (!StringMember(object, "id", &event.id) || event.id.empty() ||
      !StringMember(object, "type", &event.type) ||
      !StringMember(object, "content_type", &event.content_type)) {
    return BadLine(number,
                   "want \"id\" (not empty), \"type\" and \"content_type\" "
                   "as strings");
  }
  if (object.contains("ordering_key") &&
      !StringMember(object, "ordering_key", &event.ordering_key)) {
    return BadLine(number, "\"ordering_key\" is not a string");
  }
  absl::Status data = ReadData(object, number, &event.data);
  if (!data.ok()) return data;
  return event;
}

}  // namespace

bool IsBatch(const std::optional<std::string>& content_type,
             const std::optional<std::string>& event_ids) {
  if (!content_type.has_value() || !event_ids.has_value()) return false;
  const absl::string_view media = absl::StripAsciiWhitespace(
      absl::string_view(*content_type).substr(0, content_type->find(';')));
  return absl::EqualsIgnoreCase(media, kNdjson);
}

absl::StatusOr<std::vector<BatchEvent>> ParseBatch(
    absl::string_view body, absl::string_view event_ids,
    const std::optional<std::string>& batch_size) {
  if (body.empty() || body.back() != '\n') {
    return absl::InvalidArgumentError(
        "batch body must be one JSON line per event, each ending in \\n");
  }
  body.remove_suffix(1);
  std::vector<BatchEvent> events;
  size_t number = 0;
  for (absl::string_view line : absl::StrSplit(body, '\n')) {
    absl::StatusOr<BatchEvent> event = ParseLine(line, ++number);
    if (!event.ok()) return event.status();
    events.push_back(*std::move(event));
  }
  const std::vector<absl::string_view> ids = absl::StrSplit(event_ids, ',');
  bool same = ids.size() == events.size();
  for (size_t i = 0; same && i < ids.size(); ++i) same = ids[i] == events[i].id;
  if (!same) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ids of the ", events.size(),
                     " batch lines are not outbox-event-ids (", ids.size(),
                     " ids), in order"));
  }
  size_t size = 0;
  if (batch_size.has_value() &&
      (!absl::SimpleAtoi(*batch_size, &size) || size != events.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("outbox-batch-size is not the number of batch lines (",
                     events.size(), ")"));
  }
  return events;
}

}  // namespace outbox::sink
