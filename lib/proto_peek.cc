// Copyright (c) edge-outbox authors.

#include "lib/proto_peek.h"

#include <algorithm>
#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"

namespace outbox {
namespace {

using google::protobuf::internal::WireFormatLite;

// Calls `read(field, in)` at each field of wire type `type` whose number
// `wanted(number)`, skipping every other field; false when `message` does
// not decode (or `read` fails). `*whole`, if given: whether the message
// ended where a full parse would accept its end (not on a tag 0).
template <typename Wanted, typename Read>
bool ForEach(absl::string_view message, WireFormatLite::WireType type,
             Wanted wanted, Read read, bool* whole = nullptr) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(message.data()),
      static_cast<int>(message.size()));
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (WireFormatLite::GetTagWireType(tag) == type && wanted(field)) {
      if (!read(field, &in)) return false;
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return false;
  }
  if (whole != nullptr) *whole = in.ConsumedEntireMessage();
  return true;
}

}  // namespace

uint64_t PeekVarint(absl::string_view message, int field, uint64_t absent) {
  uint64_t value = absent;
  const bool ok = ForEach(
      message, WireFormatLite::WIRETYPE_VARINT,
      [&](int number) { return number == field; },
      [&](int, google::protobuf::io::CodedInputStream* in) {
        return in->ReadVarint64(&value);
      });
  return ok ? value : absent;
}

std::string PeekBytes(absl::string_view message, int field) {
  std::string value;
  const bool ok = ForEach(
      message, WireFormatLite::WIRETYPE_LENGTH_DELIMITED,
      [&](int number) { return number == field; },
      [&](int, google::protobuf::io::CodedInputStream* in) {
        return WireFormatLite::ReadBytes(in, &value);
      });
  return ok ? value : "";
}

bool PeekVarints(absl::string_view message, absl::Span<const int> fields,
                 absl::Span<uint64_t> values) {
  bool whole = false;
  const bool ok = ForEach(
      message, WireFormatLite::WIRETYPE_VARINT,
      [&](int number) {
        return std::find(fields.begin(), fields.end(), number) != fields.end();
      },
      [&](int number, google::protobuf::io::CodedInputStream* in) {
        uint64_t value = 0;
        if (!in->ReadVarint64(&value)) return false;
        for (size_t i = 0; i < fields.size(); ++i) {
          if (fields[i] == number) values[i] = value;
        }
        return true;
      },
      &whole);
  return ok && whole;
}

void AppendVarintField(int field, uint64_t value, std::string* message) {
  google::protobuf::io::StringOutputStream out(message);
  google::protobuf::io::CodedOutputStream coded(&out);
  WireFormatLite::WriteUInt64(field, value, &coded);
}

}  // namespace outbox
