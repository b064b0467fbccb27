// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_TESTS_TESTING_SHIFTED_CLOCK_H_
#define OUTBOX_TESTS_TESTING_SHIFTED_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "outbox/clock.h"

namespace outbox::testing {

// The system clock shifted by an offset, as `faketime` shifts it: the wall
// clock moves with real time, the monotonic clock is the real one (so
// retries, probes and timeouts run as they would). Thread-safe.
class ShiftedClock final : public Clock {
 public:
  explicit ShiftedClock(absl::Duration offset) : offset_(offset) {}
  absl::Time Now() override { return absl::Now() + offset(); }
  absl::Duration Monotonic() override { return SystemClock()->Monotonic(); }
  // NTP sets the wall clock right (ZeroDuration()), or wrong.
  void Shift(absl::Duration offset) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock l(&mu_);
    offset_ = offset;
  }

 private:
  absl::Duration offset() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock l(&mu_);
    return offset_;
  }
  absl::Mutex mu_;
  absl::Duration offset_ ABSL_GUARDED_BY(mu_);
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_SHIFTED_CLOCK_H_
