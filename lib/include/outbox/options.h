// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_LIB_INCLUDE_OUTBOX_OPTIONS_H_
#define OUTBOX_LIB_INCLUDE_OUTBOX_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "outbox/clock.h"

namespace outbox {

// A class of events: the event types it holds, how urgent they are, and how
// much of the queue they may take. See Options::event_classes.
struct EventClass {
  // 1..64 characters of [A-Za-z0-9_.-], unique among the classes; names the
  // class in errors, dead-letter reasons, stats and metrics.
  std::string name;
  // The event types the class holds, as routes match them: an exact type
  // ("refund.created"), a prefix ("telemetry.*") or "*". A type belongs to
  // the class with its most specific pattern (exact, then the longest
  // prefix, then "*"); two classes may not list the same pattern.
  std::vector<std::string> event_types;
  // 0..9. The agent sends due events of a higher priority first, across
  // destinations and types; FIFO per ordering key is kept whatever the
  // priorities of the key's events. Default: 0, as events of no class.
  int priority = 0;
  // This class's share of the queue; 0: none of its own (the store-wide
  // Options::max_pending_events / max_pending_bytes still hold).
  uint64_t max_pending_events = 0;
  uint64_t max_pending_bytes = 0;
  // What a Commit that would take the class past its limits does.
  enum class OnFull {
    kReject,      // Commit fails with kResourceExhausted, writing nothing
    kDropOldest,  // the class's oldest pending events make room (evicted)
  };
  OnFull on_full = OnFull::kReject;
  // kDropOldest and expire_after are allowed only with evictable set: the
  // configuration says in one place that events of the class may be given
  // up without being delivered. Default: false.
  bool evictable = false;
  // A class that must never lose an event (sales, refunds): Open refuses it
  // evictable, kDropOldest or an expire_after. Default: false.
  bool fiscal = false;
  // An evicted event becomes a dead letter with reason "evicted: ..." (true)
  // or is deleted and counted in Stats::evicted_deleted_total (false: only
  // the count survives). Default: true.
  bool keep_evicted = true;
  // An event pending longer than this becomes a dead letter with reason
  // "expired: ...", once the agent trusts the clock (Store::ExpirePending).
  // Zero: never. Default: zero.
  absl::Duration expire_after = absl::ZeroDuration();
};

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
  // the pending queue past either limit. These never drop anything to make
  // room (only a class with on_full kDropOldest may, see EventClass).
  // Defaults: 1,000,000 events and 256 MiB of stored entries.
  uint64_t max_pending_events = 1000000;
  uint64_t max_pending_bytes = uint64_t{256} << 20;
  // Classes of events, each with a priority and optionally its own limits,
  // an eviction policy and an expiry (see EventClass). An event whose type
  // no class names is of none: priority 0, only the limits above. The store
  // enforces them, so they are store options; a configuration file names
  // them under `classes` (docs/configuration.md). Default: none.
  std::vector<EventClass> event_classes;

  // A Commit that repeats an idempotency key committed less than this long
  // ago writes nothing and returns the first commit's answer. Older keys are
  // forgotten (and deleted by Store::PurgeExpiredIdempotencyKeys). Measured
  // on the store clock (Store::StoreClockNow): time the store is open, which
  // a wall clock set ahead or back does not move. Default: 24 hours.
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
