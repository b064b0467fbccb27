// Copyright (c) edge-outbox authors.

#include <sys/timex.h>
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

  std::optional<bool> Synchronized() override {
    // Reads only (modes 0). TIME_ERROR: the kernel's STA_UNSYNC is set, as
    // it is from boot until a time daemon says otherwise.
    timex tx = {};
    const int state = adjtimex(&tx);
    if (state == -1) return std::nullopt;
    return state != TIME_ERROR;
  }
};

}  // namespace

Clock* SystemClock() {
  static RealClock* const clock = new RealClock();
  return clock;
}

}  // namespace outbox
