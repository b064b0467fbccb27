// Copyright (c) edge-outbox authors.
//
// Conversions between the stored protobuf messages (proto/storage.proto) and
// the public structs. Decoding never crashes: a value that does not parse is
// kDataLoss naming the column family and key.

#ifndef OUTBOX_LIB_CODEC_H_
#define OUTBOX_LIB_CODEC_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "outbox/event.h"
#include "proto/storage.pb.h"

namespace outbox {

// Stored times are Unix milliseconds; InfinitePast/Future map to the int64
// extremes and back.
int64_t ToStoredMillis(absl::Time t);
absl::Time FromStoredMillis(int64_t ms);

PendingEvent ToPendingEvent(const storage::OutboxEntry& entry);
storage::OutboxEntry ToEntry(const PendingEvent& event);

// Parses `value` read from `family`/`key` into `message`; kDataLoss if it
// does not parse. `key_for_humans` is how the message names the key.
absl::Status DecodeStored(absl::string_view family,
                          absl::string_view key_for_humans,
                          absl::string_view value,
                          google::protobuf::MessageLite* message);

// DecodeStored for a pending entry, also checking that the entry's own seq
// matches its key (a mismatch means a misplaced or corrupt value).
absl::StatusOr<storage::OutboxEntry> DecodePendingEntry(
    uint64_t seq, absl::string_view value);

std::string Encode(const google::protobuf::MessageLite& message);

// True if `dead` holds a quarantined, undecodable pending value rather than
// an event: it is never replayed and never purged by age.
bool IsUndecodable(const storage::DeadLetter& dead);

}  // namespace outbox

#endif  // OUTBOX_LIB_CODEC_H_
