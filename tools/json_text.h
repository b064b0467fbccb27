// Copyright (c) edge-outbox authors.
//
// UTF-8 and JSON string helpers shared by the tools that print what they
// read from stores and requests (outboxctl, outbox-sink): such text is
// arbitrary bytes, so it is checked before it goes into JSON.

#ifndef OUTBOX_TOOLS_JSON_TEXT_H_
#define OUTBOX_TOOLS_JSON_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace outbox {

// The length (1..4) of the well-formed UTF-8 sequence starting at s[i], or 0
// if there is none (stray continuation byte, overlong form, surrogate, past
// U+10FFFF, truncated). REQUIRES: i < s.size().
size_t Utf8SequenceLength(absl::string_view s, size_t i);

// The code point of the well-formed sequence of `len` bytes at s[i].
// REQUIRES: len == Utf8SequenceLength(s, i) && len > 0.
char32_t DecodeUtf8(absl::string_view s, size_t i, size_t len);

// True if `s` is well-formed UTF-8 and so can go into a JSON string as is.
bool IsValidUtf8(absl::string_view s);

// `s` as a JSON string literal: quotes, backslashes and control characters
// escaped; bytes that are not valid UTF-8 become U+FFFD (callers that must
// keep them check IsValidUtf8 first and encode differently).
std::string JsonQuote(absl::string_view s);

}  // namespace outbox

#endif  // OUTBOX_TOOLS_JSON_TEXT_H_
