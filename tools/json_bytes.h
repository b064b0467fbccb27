// Copyright (c) edge-outbox authors.
//
// Untrusted bytes in the JSON that outboxctl and outbox-sink print, built on
// nlohmann::json. Stored strings and request fields are arbitrary bytes, and
// a JSON string holds only UTF-8: each field goes in as text when it is
// UTF-8 and in a lossless ASCII form otherwise, so every document printed is
// valid JSON whatever bytes a caller committed or a client sent.

#ifndef OUTBOX_TOOLS_JSON_BYTES_H_
#define OUTBOX_TOOLS_JSON_BYTES_H_

#include <string>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace outbox {

// True if `s` is well-formed UTF-8 (RFC 3629: no overlong forms, surrogates
// or code points past U+10FFFF), i.e. nlohmann::json can print it as a string.
bool IsValidUtf8(absl::string_view s);

// Sets member `name` of `object` to `bytes` as a string if they are valid
// UTF-8, otherwise member `name`_base64 to their standard base64.
// REQUIRES: `object` is an object (or null, which becomes one).
void SetBytes(absl::string_view name, absl::string_view bytes,
              nlohmann::ordered_json* object);

// `value` as compact JSON, members in insertion order: control characters,
// quotes and backslashes escaped, UTF-8 as is. Never throws: a string that
// is not UTF-8 (none should be: see SetBytes) gets U+FFFD per bad sequence.
std::string DumpJson(const nlohmann::ordered_json& value);

}  // namespace outbox

#endif  // OUTBOX_TOOLS_JSON_BYTES_H_
