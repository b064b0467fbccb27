// Copyright (c) edge-outbox authors.

#include "absl/time/clock.h"
#include "outbox/clock.h"

namespace outbox {
namespace {

class RealClock final : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
};

}  // namespace

Clock* SystemClock() {
  static RealClock* const clock = new RealClock();
  return clock;
}

}  // namespace outbox
