// Copyright (c) edge-outbox authors.

#include "agent/telemetry/log_format.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace outbox {
namespace {

std::string Timestamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone());
}

bool HasControlCharacter(absl::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

std::string TextLine(const LogRecord& record, absl::string_view program) {
  // A line break in a message (a receiver's reason phrase, say) would forge
  // a second record; such a message is printed C-escaped instead.
  const std::string message = HasControlCharacter(record.message)
                                  ? absl::CEscape(record.message)
                                  : record.message;
  return absl::StrCat(Timestamp(record.time), " ", program, ": ", message);
}

std::string JsonLine(const LogRecord& record) {
  // ordered_json keeps the fields in this order: ts first, as people and
  // shippers expect.
  nlohmann::ordered_json line;
  line["ts"] = Timestamp(record.time);
  line["level"] = std::string(LogSeverityName(record.severity));
  line["event"] = std::string(LogEventName(record.event));
  if (!record.event_id.empty()) line["event_id"] = record.event_id;
  if (!record.destination.empty()) line["destination"] = record.destination;
  line["msg"] = record.message;
  // The library escapes quotes and control characters; bytes that are not
  // UTF-8 become U+FFFD instead of an exception.
  return line.dump(-1, ' ', /*ensure_ascii=*/false,
                   nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view name) {
  if (name == "text") return LogFormat::kText;
  if (name == "json") return LogFormat::kJson;
  return absl::InvalidArgumentError(absl::StrCat(
      "--log-format must be text or json, not \"", absl::CEscape(name), "\""));
}

std::string FormatLogLine(const LogRecord& record, LogFormat format,
                          absl::string_view program) {
  return format == LogFormat::kJson ? JsonLine(record)
                                    : TextLine(record, program);
}

}  // namespace outbox
