// Copyright (c) edge-outbox authors.
//
// A strict JSON (RFC 8259) parser: outboxctl checks `emit --payload` with it
// before committing a JSON event, and its tests read --json output with it.

#ifndef OUTBOX_TOOLS_CTL_JSON_VALUE_H_
#define OUTBOX_TOOLS_CTL_JSON_VALUE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace outbox::ctl {

// A parsed JSON value. Plain data.
struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  // kString: the decoded text (UTF-8). kNumber: the number as written.
  std::string text;
  // kArray: the elements. kObject: the member values, named by `keys`.
  std::vector<JsonValue> items;
  std::vector<std::string> keys;

  // The value of the first member named `key`, or nullptr (also when this is
  // not an object).
  const JsonValue* Find(absl::string_view key) const;
};

// Parses one JSON text (surrounding whitespace allowed). Strings must be
// valid UTF-8 and escapes must not produce lone surrogates. Nesting deeper
// than 512 levels is refused rather than risking the stack.
// Errors: kInvalidArgument saying what is wrong and at which byte offset.
absl::StatusOr<JsonValue> ParseJson(absl::string_view text);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_JSON_VALUE_H_
