// Copyright (c) edge-outbox authors.

#include "lib/proto_peek.h"

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace outbox {
namespace {

using google::protobuf::internal::WireFormatLite;

// Calls `read(in)` at each occurrence of field `field` with wire type
// `type`, skipping every other field; false when `message` does not decode
// (or `read` fails).
template <typename Read>
bool ForEach(absl::string_view message, int field,
             WireFormatLite::WireType type, Read read) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(message.data()),
      static_cast<int>(message.size()));
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == field &&
        WireFormatLite::GetTagWireType(tag) == type) {
      if (!read(&in)) return false;
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return false;
  }
  return true;
}

}  // namespace

uint64_t PeekVarint(absl::string_view message, int field, uint64_t absent) {
  uint64_t value = absent;
  const bool ok = ForEach(message, field, WireFormatLite::WIRETYPE_VARINT,
                          [&](google::protobuf::io::CodedInputStream* in) {
                            return in->ReadVarint64(&value);
                          });
  return ok ? value : absent;
}

std::string PeekBytes(absl::string_view message, int field) {
  std::string value;
  const bool ok =
      ForEach(message, field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED,
              [&](google::protobuf::io::CodedInputStream* in) {
                return WireFormatLite::ReadBytes(in, &value);
              });
  return ok ? value : "";
}

bool PeekVarints(absl::string_view message, absl::Span<const int> fields,
                 absl::Span<uint64_t> values) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(message.data()),
      static_cast<int>(message.size()));
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    if (WireFormatLite::GetTagWireType(tag) ==
        WireFormatLite::WIRETYPE_VARINT) {
      const int field = WireFormatLite::GetTagFieldNumber(tag);
      uint64_t value = 0;
      if (!in.ReadVarint64(&value)) return false;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i] == field) values[i] = value;
      }
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return false;
  }
  return in.ConsumedEntireMessage();
}

}  // namespace outbox
