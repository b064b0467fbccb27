// Copyright (c) edge-outbox authors.
//
// A small JSON writer for outboxctl's --json output: compact, one document
// per call, always valid JSON whatever bytes the store holds.

#ifndef OUTBOX_TOOLS_CTL_JSON_WRITER_H_
#define OUTBOX_TOOLS_CTL_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/json_text.h"

namespace outbox::ctl {

using ::outbox::JsonQuote;  // tools/json_text.h

// Builds one JSON value. Calls must nest correctly (Key before each member
// value, End* matching Begin*); the writer inserts the commas.
//   JsonWriter w;
//   w.BeginObject().Key("seq").Uint(12).Bytes("payload", p).EndObject();
// REQUIRES: External synchronization.
class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // `name` is written as given (JsonQuote'd).
  JsonWriter& Key(absl::string_view name);
  JsonWriter& String(absl::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();

  // Member `name`: the bytes as a string if they are valid UTF-8, otherwise
  // member `name`_base64 with their standard base64. Lossless either way.
  JsonWriter& Bytes(absl::string_view name, absl::string_view bytes);

  // Members `name` (RFC 3339 UTC) and `name`_unix_ms; both null for an
  // infinite time (e.g. "no attempt yet").
  JsonWriter& Time(absl::string_view name, absl::Time t);

  const std::string& str() const { return out_; }

 private:
  void BeforeValue();

  std::string out_;
  // One entry per open container: whether it has an element yet.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_JSON_WRITER_H_
