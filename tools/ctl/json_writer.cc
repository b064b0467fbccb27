// Copyright (c) edge-outbox authors.

#include "tools/ctl/json_writer.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/ctl/text.h"

namespace outbox::ctl {

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_element_.empty()) {
    if (has_element_.back()) out_ += ',';
    has_element_.back() = true;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  out_ += '}';
  has_element_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  out_ += ']';
  has_element_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(absl::string_view name) {
  BeforeValue();
  absl::StrAppend(&out_, JsonQuote(name), ":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(absl::string_view s) {
  BeforeValue();
  out_ += JsonQuote(s);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  BeforeValue();
  absl::StrAppend(&out_, v);
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  absl::StrAppend(&out_, v);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  BeforeValue();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::Bytes(absl::string_view name, absl::string_view bytes) {
  if (IsValidUtf8(bytes)) return Key(name).String(bytes);
  return Key(absl::StrCat(name, "_base64")).String(absl::Base64Escape(bytes));
}

JsonWriter& JsonWriter::Time(absl::string_view name, absl::Time t) {
  const std::string ms_name = absl::StrCat(name, "_unix_ms");
  if (t == absl::InfinitePast() || t == absl::InfiniteFuture()) {
    return Key(name).Null().Key(ms_name).Null();
  }
  return Key(name)
      .String(FormatRfc3339(t))
      .Key(ms_name)
      .Int(absl::ToUnixMillis(t));
}

}  // namespace outbox::ctl
