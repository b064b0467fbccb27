// Copyright (c) edge-outbox authors.
//
// The fields of a stored pending entry (storage::OutboxEntry) that the queue
// index needs, read straight from the protobuf wire format: the payload and
// the other text, most of an entry, are skipped instead of copied. Opening a
// store with a million pending events reads every entry once, and building
// each as a message was most of the open (allocations for every field).
// The views point into the value scanned.

#ifndef OUTBOX_LIB_ENTRY_SCAN_H_
#define OUTBOX_LIB_ENTRY_SCAN_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/storage.pb.h"

namespace outbox {

struct EntryIndexFields {
  uint64_t seq = 0;
  absl::string_view event_id;
  absl::string_view type;
  absl::string_view ordering_key;
  absl::string_view destination;
  int64_t created_unix_ms = 0;
  int64_t next_attempt_unix_ms = 0;
  int64_t last_attempt_unix_ms = 0;
  int64_t scheduled_unix_ms = 0;
  uint32_t attempts = 0;
  int state = 0;
};

// Scans `value`, stored under `seq` in the pending family. Errors:
// kDataLoss when the value is not a pending entry for that key, or is not
// in the plain encoding this library writes (groups, over-long varints);
// the caller then decodes it in full (DecodePendingEntry), which decides.
// What this accepts, DecodePendingEntry accepts with the same field values,
// and it accepts every entry this library encodes (both checked by the
// stored-entry fuzzer).
absl::StatusOr<EntryIndexFields> ScanPendingEntry(uint64_t seq,
                                                  absl::string_view value);

// The index fields of a decoded entry; the views point into `entry`.
EntryIndexFields IndexFieldsOf(const storage::OutboxEntry& entry);

// ScanPendingEntry, or for a value it leaves to the full decoder,
// DecodePendingEntry into `*decoded` (the views then point into it).
// Errors: DecodePendingEntry's (kDataLoss).
absl::StatusOr<EntryIndexFields> ReadIndexFields(uint64_t seq,
                                                 absl::string_view value,
                                                 storage::OutboxEntry* decoded);

}  // namespace outbox

#endif  // OUTBOX_LIB_ENTRY_SCAN_H_
