// Copyright (c) edge-outbox authors.

#include <time.h>

#include "absl/time/clock.h"
#include "outbox/clock.h"

namespace outbox {
namespace {

class RealClock final : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }

  absl::Duration Monotonic() override {
    timespec ts;
    // Cannot fail for CLOCK_MONOTONIC with a valid pointer (clock_gettime(2)).
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return absl::DurationFromTimespec(ts);
  }
};

}  // namespace

Clock* SystemClock() {
  static RealClock* const clock = new RealClock();
  return clock;
}

}  // namespace outbox
