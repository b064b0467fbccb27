// Copyright (c) edge-outbox authors.
//
// The HTTP token rule (RFC 9110 section 5.6.2), which header names follow:
// one or more of the letters, digits and !#$%&'*+-.^_`|~. Anything else (a
// space, a colon, a control byte, a byte past ASCII) would let a name break
// the header's framing. The curl transport refuses requests that break it;
// the agent's configuration checks the same rule up front.

#ifndef OUTBOX_PLATFORM_HTTP_TOKEN_H_
#define OUTBOX_PLATFORM_HTTP_TOKEN_H_

#include "absl/strings/string_view.h"

namespace outbox {

// The characters a token may hold, for messages.
inline constexpr absl::string_view kHttpTokenPunctuation = "!#$%&'*+-.^_`|~";

// True if `text` is a non-empty HTTP token. Thread-safe.
bool IsHttpToken(absl::string_view text);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_HTTP_TOKEN_H_
