// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_LIB_INCLUDE_OUTBOX_OPTIONS_H_
#define OUTBOX_LIB_INCLUDE_OUTBOX_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "outbox/clock.h"

namespace outbox {

// How to open a Store. Plain values; every field has a documented default.
struct Options {
  // The caller's record tables (one RocksDB column family each), e.g.
  // {"sales"}. Names are 1..64 characters of [A-Za-z0-9_.-], must not be
  // "default" and must not start with "outbox.". Tables missing from the
  // store are created; a table present in the store but absent here makes
  // Open fail (its data would otherwise be silently unreachable).
  // Default: none.
  std::vector<std::string> tables;

  // If true, Open creates the store when `path` does not exist or is an
  // empty directory. If false, a missing store is kNotFound. Default: true.
  bool create_if_missing = true;

  // If true, every write (Commit, MarkDelivered, ...) returns only after the
  // write-ahead log is fsync'ed: a write that returned OK survives a power
  // cut. If false, writes are faster but the last ones before a power cut
  // may vanish (each write is still all-or-nothing). Default: true.
  bool sync = true;

  // Commit fails with kResourceExhausted, writing nothing, when it would take
  // the pending queue past either limit. Nothing is ever dropped to make room.
  // Defaults: 1,000,000 events and 256 MiB of stored entries.
  uint64_t max_pending_events = 1000000;
  uint64_t max_pending_bytes = uint64_t{256} << 20;

  // A Commit that repeats an idempotency key committed less than this long
  // ago writes nothing and returns the first commit's answer. Older keys are
  // forgotten (and purged by PurgeExpired()). Default: 24 hours.
  absl::Duration idempotency_window = absl::Hours(24);

  // How much memory RocksDB may use, see MemoryProfile. Default: kDefault.
  enum class MemoryProfile {
    // RocksDB's own defaults: 64 MiB write buffers per table, 8 MiB block
    // cache per table, unbounded open files. For gateways with RAM to spare.
    kDefault,
    // For boards with about 256 MB of RAM: all write buffers share 8 MiB
    // (a WriteBufferManager; 2 MiB each), all tables share one 4 MiB block
    // cache that also holds index and filter blocks, at most 64 open files,
    // two background jobs. Commits are unaffected; reads of large backlogs
    // hit the disk more often. Measured in docs/measured.md (the RSS row).
    kSmall,
  };
  MemoryProfile memory_profile = MemoryProfile::kDefault;

  // Source of time for created/next-attempt times and key expiry. Borrowed:
  // must outlive the Store. nullptr means the system clock. Default: nullptr.
  Clock* clock = nullptr;
};

}  // namespace outbox

#endif  // OUTBOX_LIB_INCLUDE_OUTBOX_OPTIONS_H_
