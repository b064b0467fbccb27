// Copyright (c) edge-outbox authors.
//
// Text helpers for outboxctl's output: quoting of untrusted strings for a
// terminal, and time formats. Stored strings (event types,
// keys, errors, payloads) are arbitrary bytes written by other programs, so
// nothing from the store reaches the terminal unescaped.

#ifndef OUTBOX_TOOLS_CTL_TEXT_H_
#define OUTBOX_TOOLS_CTL_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace outbox::ctl {

// True if `s` is valid UTF-8 without anything a terminal would interpret:
// C0/C1 controls, DEL, or bidirectional overrides (which reorder what the
// operator sees). Newline, tab and carriage return pass if `allow_newlines`.
bool IsSafeForTerminal(absl::string_view s, bool allow_newlines);

// `s` as one shell-like word for a human line: unchanged if it is non-empty
// and safe with no space, quote, backslash or '='; otherwise in double quotes
// with \" \\ \n \r \t, \xNN for bytes that are not valid UTF-8 or are
// controls, and \u{NNNN} for other unsafe code points.
std::string Quote(absl::string_view s);

// RFC 3339 in UTC with milliseconds, e.g. "2026-01-01T00:00:00.000Z".
// REQUIRES: t is finite.
std::string FormatRfc3339(absl::Time t);

// FormatRfc3339(t), or `none` for an infinite time.
std::string FormatTimeOr(absl::Time t, absl::string_view none);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_TEXT_H_
