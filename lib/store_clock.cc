// Copyright (c) edge-outbox authors.

#include "lib/store_clock.h"

#include <algorithm>

namespace outbox {

void StoreClock::Start(int64_t stored_ms, int64_t mark_ms) {
  int64_t base = stored_ms;
  if (base <= 0) base = mark_ms;
  if (base <= 0) base = absl::ToUnixMillis(clock_->Now());
  // Started before (RocksDB reopened after a full disk): the last durable
  // write may lie behind the time already counted, and the clock never falls.
  if (base_ms_.load() > 0) base = std::max(base, NowMs());
  // The monotonic reading first: NowMs() may run on another thread as soon
  // as base_ms_ is set, and must not see a base from before this one.
  base_monotonic_ms_.store(absl::ToInt64Milliseconds(clock_->Monotonic()));
  base_ms_.store(base);
}

int64_t StoreClock::NowMs() const {
  const int64_t elapsed = absl::ToInt64Milliseconds(clock_->Monotonic()) -
                          base_monotonic_ms_.load();
  return base_ms_.load() + std::max<int64_t>(elapsed, 0);
}

int64_t CommittedStoreClockMs(const storage::IdempotencyRecord& record) {
  return record.committed_store_clock_ms() > 0
             ? record.committed_store_clock_ms()
             : record.committed_unix_ms();
}

int64_t DeadStoreClockMs(const storage::DeadLetter& dead) {
  return dead.dead_store_clock_ms() > 0 ? dead.dead_store_clock_ms()
                                        : dead.dead_unix_ms();
}

}  // namespace outbox
