// Copyright (c) edge-outbox authors.

#include "tests/testing/fake_clock.h"

namespace outbox::testing {

FakeClock::FakeClock(absl::Time start) : now_(start) {}

absl::Time FakeClock::Now() {
  absl::MutexLock l(&mu_);
  return now_;
}

absl::Duration FakeClock::Monotonic() {
  absl::MutexLock l(&mu_);
  return monotonic_;
}

void FakeClock::Advance(absl::Duration d) {
  absl::MutexLock l(&mu_);
  now_ += d;
  if (d > absl::ZeroDuration()) monotonic_ += d;
}

void FakeClock::Set(absl::Time t) {
  absl::MutexLock l(&mu_);
  now_ = t;
}

std::optional<bool> FakeClock::Synchronized() {
  absl::MutexLock l(&mu_);
  return synchronized_;
}

void FakeClock::SetSynchronized(std::optional<bool> synchronized) {
  absl::MutexLock l(&mu_);
  synchronized_ = synchronized;
}

}  // namespace outbox::testing
