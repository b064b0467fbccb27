// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_TESTS_TESTING_FAKE_CLOCK_H_
#define OUTBOX_TESTS_TESTING_FAKE_CLOCK_H_

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "outbox/clock.h"

namespace outbox::testing {

// A clock that moves only when told to: a wall clock and a monotonic one.
// Thread-safe.
class FakeClock final : public Clock {
 public:
  // Starts at 2026-01-01T00:00:00Z unless told otherwise.
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1767225600));

  absl::Time Now() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Duration Monotonic() override ABSL_LOCKS_EXCLUDED(mu_);

  // Time passes: both clocks move by `d` (>= 0).
  void Advance(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);
  // The wall clock is set to `t` (NTP, an operator, a stale RTC), by any
  // amount either way; the monotonic clock does not move.
  void Set(absl::Time t) ABSL_LOCKS_EXCLUDED(mu_);
  // What Synchronized() says; nullopt (unknown) unless told otherwise.
  std::optional<bool> Synchronized() override ABSL_LOCKS_EXCLUDED(mu_);
  void SetSynchronized(std::optional<bool> synchronized)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  absl::Duration monotonic_ ABSL_GUARDED_BY(mu_) = absl::Hours(1);
  std::optional<bool> synchronized_ ABSL_GUARDED_BY(mu_);
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_FAKE_CLOCK_H_
