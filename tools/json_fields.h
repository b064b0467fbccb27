// Copyright (c) edge-outbox authors.
//
// Reading members of one-line JSON objects: outbox-sink's request-log lines
// and the flat records and payloads outbox-pos-sim writes. Used by the
// delivery audit (tools/audit/), outbox-demo and the tests. Never throws:
// text that is not JSON reads as having no members.

#ifndef OUTBOX_TOOLS_JSON_FIELDS_H_
#define OUTBOX_TOOLS_JSON_FIELDS_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace outbox {

// Member `key` of the JSON object `line`, printed back as compact JSON:
// "\"abc\"", "true", "12", "null"; nullopt if it has no such member or
// `line` is not a JSON object.
std::optional<std::string> JsonField(absl::string_view line,
                                     absl::string_view key);

// The value of member `key` of the JSON object `line` if it is a string;
// "" otherwise (absent, null, not a string, `line` not JSON).
std::string JsonString(absl::string_view line, absl::string_view key);

}  // namespace outbox

#endif  // OUTBOX_TOOLS_JSON_FIELDS_H_
