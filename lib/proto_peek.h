// Copyright (c) edge-outbox authors.
//
// One top-level field of an encoded protobuf message, read (or set) without
// decoding the rest: the agent looks at a state's phase or definition, or a
// result row's outcome, and the store at the phase of a state it writes, where
// decoding it whole (every request and answer in it) would cost more than
// the rest of the work. Pure functions: thread-safe.

#ifndef OUTBOX_LIB_PROTO_PEEK_H_
#define OUTBOX_LIB_PROTO_PEEK_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace outbox {

// The value of varint field `field` of `message` (the last one, as a full
// parse keeps), or `absent` when it has none or does not decode that far.
uint64_t PeekVarint(absl::string_view message, int field, uint64_t absent);

// The value of length-delimited field `field` of `message` (the last one),
// or "" when it has none or does not decode that far.
std::string PeekBytes(absl::string_view message, int field);

// The values of varint fields `fields` of `message` into `values` (the
// same size; each the field's last value, and left as it is where the
// message has none), in one pass. False when `message` does not decode as
// a sequence of fields (what ParseFromString would refuse first).
bool PeekVarints(absl::string_view message, absl::Span<const int> fields,
                 absl::Span<uint64_t> values);

// Appends varint field `field` = `value` to the encoded message `*message`:
// a full parse then reads `value` for it (the last occurrence wins), so a
// field is set without decoding the rest.
void AppendVarintField(int field, uint64_t value, std::string* message);

}  // namespace outbox

#endif  // OUTBOX_LIB_PROTO_PEEK_H_
