// Copyright (c) edge-outbox authors.
//
// How outboxctl shows events: one line each for `list`, a block for `show`,
// and JSON objects for --json. Only `show` includes payloads.

#ifndef OUTBOX_TOOLS_CTL_EVENT_FORMAT_H_
#define OUTBOX_TOOLS_CTL_EVENT_FORMAT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "outbox/event.h"

namespace outbox::ctl {

// One line (with '\n') for `list`: id, seq, type, ordering key, destination,
// attempts, next attempt or death, last error, and the HTTP status when the
// last attempt had an HTTP answer. No payload.
std::string PendingLine(const PendingEvent& event);
std::string DeadLine(const DeadLetter& dead);

// Every field, one per line (the HTTP status only after an HTTP answer),
// payload last: printed as is when it is text a terminal shows safely,
// otherwise as base64 (and said so).
std::string PendingDetail(const PendingEvent& event);
std::string DeadDetail(const DeadLetter& dead);

// The event as a JSON object with "state": "pending" or "dead". Times come
// as RFC 3339 plus *_unix_ms; byte fields that are not UTF-8 as *_base64
// (SetBytes, tools/json_bytes.h). The payload only if `with_payload`.
nlohmann::ordered_json PendingJson(const PendingEvent& event,
                                   bool with_payload);
nlohmann::ordered_json DeadJson(const DeadLetter& dead, bool with_payload);

// Building blocks of the detail blocks, shared with the workflow's
// (workflow_text.cc). AddField appends "  label:   value\n" aligned with
// the others; AppendBody appends `body` (a payload, or a request or response
// body) under "<indent><label> (N bytes[, truncated]):", as is when a
// terminal shows it safely, otherwise as base64 (and says so).
void AddField(std::string* out, absl::string_view label,
              absl::string_view value);
void AppendBody(absl::string_view indent, absl::string_view label,
                absl::string_view body, bool truncated, std::string* out);

// "-" for 0 (no HTTP answer), else the status.
std::string HttpStatusText(int status);

// Sets members `name` (RFC 3339 UTC) and `name`_unix_ms of `object`; both
// null for an infinite time (e.g. "no attempt yet").
void SetTime(absl::string_view name, absl::Time t,
             nlohmann::ordered_json* object);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_EVENT_FORMAT_H_
