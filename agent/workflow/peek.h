// Copyright (c) edge-outbox authors.
//
// One top-level field of an encoded protobuf message, read without decoding
// the rest: the agent looks at a state's phase or definition, or a result
// row's outcome, where decoding it whole (every request and answer in it)
// would cost more than the rest of the work. Pure functions: thread-safe.

#ifndef OUTBOX_AGENT_WORKFLOW_PEEK_H_
#define OUTBOX_AGENT_WORKFLOW_PEEK_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace outbox::workflow {

// The value of varint field `field` of `message` (the last one, as a full
// parse keeps), or `absent` when it has none or does not decode that far.
uint64_t PeekVarint(absl::string_view message, int field, uint64_t absent);

// The value of length-delimited field `field` of `message` (the last one),
// or "" when it has none or does not decode that far.
std::string PeekBytes(absl::string_view message, int field);

}  // namespace outbox::workflow

#endif  // OUTBOX_AGENT_WORKFLOW_PEEK_H_
