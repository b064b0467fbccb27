// Copyright (c) edge-outbox authors.

#include "lib/store_clock.h"

#include <algorithm>

namespace outbox {

int64_t StoreClock::MonotonicMs() const {
  return absl::ToInt64Milliseconds(clock_->Monotonic());
}

void StoreClock::Start(int64_t stored_ms, int64_t mark_ms) {
  int64_t base = stored_ms;
  if (base <= 0) base = mark_ms;
  if (base <= 0) base = absl::ToUnixMillis(clock_->Now());
  // Started before (RocksDB reopened after a full disk): the last durable
  // write may lie behind the time already counted, and the clock never falls.
  if (started()) base = std::max(base, NowMs());
  offset_ms_.store(base - MonotonicMs());
}

int64_t StoreClock::NowMs() const { return offset_ms_.load() + MonotonicMs(); }

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
