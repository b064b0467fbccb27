// Copyright (c) edge-outbox authors.
//
// How outbox-agent writes a LogRecord (outbox/log.h) as one line: `text`,
// what a person reads on a terminal or in journalctl, or `json`, one object
// per line for log shippers. Pure functions; safe from any thread.

#ifndef OUTBOX_AGENT_TELEMETRY_LOG_FORMAT_H_
#define OUTBOX_AGENT_TELEMETRY_LOG_FORMAT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "outbox/log.h"

namespace outbox {

enum class LogFormat { kText, kJson };

// "text" or "json". Errors: kInvalidArgument naming the two.
absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view name);

// `record` as one line, without its newline. Whatever the message holds
// (line breaks, quotes, bytes that are not UTF-8), the result is one line.
//   text: "<ts> <program>: <msg>", e.g.
//         2026-12-01T10:00:00.123Z outbox-agent: destination sink reachable
//   json: {"ts":"2026-12-01T10:00:00.123Z","level":"info",
//          "event":"destination_reachable","event_id":"...",
//          "destination":"sink","msg":"..."}
//         event_id and destination only when the record has them.
// ts is RFC 3339 in UTC, to the millisecond.
std::string FormatLogLine(const LogRecord& record, LogFormat format,
                          absl::string_view program);

}  // namespace outbox

#endif  // OUTBOX_AGENT_TELEMETRY_LOG_FORMAT_H_
