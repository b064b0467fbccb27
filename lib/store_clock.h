// Copyright (c) edge-outbox authors.
//
// StoreClock: the time a store deletes by age with (dead-letter retention,
// the idempotency window, finished workflows). The wall clock cannot be
// trusted for that: an RTC that runs fast, a GPS or NTP glitch or a year
// typed wrong would make minutes-old dead letters look older than their
// retention, and one set back would make a key committed under it look a
// year old once the clock is right. So the store keeps its own clock:
//
// - it starts at the wall-clock time the store was created (a store written
//   before it existed starts at its clock mark, the newest time it had seen);
// - it advances only with the monotonic clock, and only while the store is
//   open: a wall clock set ahead or back never moves it, nor does the time
//   the store is closed or the device off;
// - every group write persists it (QueueState::store_clock_ms), so a reopen
//   goes on from the last durable write, never below a time it stamped.
//
// So what it measures is the time the store has been open. A till switched
// off every night keeps its dead letters and idempotency keys longer, by
// calendar, than their settings say: never shorter. That is the trade: the
// store has no source it could trust to count the time it was closed.
//
// Thread-safe: Start runs at open (and again, holding the store's locks,
// when RocksDB is reopened after a full disk); NowMs reads one atomic, so a
// reader never pairs one start's base with another's.

#ifndef OUTBOX_LIB_STORE_CLOCK_H_
#define OUTBOX_LIB_STORE_CLOCK_H_

#include <atomic>
#include <cstdint>
#include <limits>

#include "absl/time/time.h"
#include "outbox/clock.h"
#include "proto/storage.pb.h"

namespace outbox {

class StoreClock {
 public:
  // `clock` (borrowed; must outlive this) is read for its monotonic time.
  explicit StoreClock(Clock* clock) : clock_(clock) {}

  // Starts the clock at `stored_ms` (QueueState::store_clock_ms) if it is
  // set, else at `mark_ms` (the wall-clock mark) if that is, else at the
  // wall clock's time now (a new store). Called again (a reopen of RocksDB
  // while the store stays open), it never sets the clock back.
  void Start(int64_t stored_ms, int64_t mark_ms);

  // Whether Start has run (a store whose open failed never started it).
  bool started() const { return offset_ms_.load() != kNotStarted; }

  // The store clock now, in Unix milliseconds: never falls.
  // REQUIRES: started().
  int64_t NowMs() const;
  absl::Time Now() const { return absl::FromUnixMillis(NowMs()); }

 private:
  static constexpr int64_t kNotStarted = std::numeric_limits<int64_t>::min();
  int64_t MonotonicMs() const;

  Clock* const clock_;
  // The store clock minus the monotonic clock, in milliseconds: one value,
  // so that NowMs is a single read.
  std::atomic<int64_t> offset_ms_{kNotStarted};
};

// The store-clock times the store stamps on what it deletes by age. A
// record written before the store clock existed has only its wall-clock
// time, which serves instead (the clock started near it: at the store's
// clock mark).
// An idempotency record's commit: its window runs from it.
int64_t CommittedStoreClockMs(const storage::IdempotencyRecord& record);
// A dead letter's death: retention runs from it.
int64_t DeadStoreClockMs(const storage::DeadLetter& dead);

}  // namespace outbox

#endif  // OUTBOX_LIB_STORE_CLOCK_H_
