// Copyright (c) edge-outbox authors.
//
// Clock: where the outbox reads wall-clock time. Injected through
// Options::clock so that tests can move time by hand.

#ifndef OUTBOX_PLATFORM_INCLUDE_OUTBOX_CLOCK_H_
#define OUTBOX_PLATFORM_INCLUDE_OUTBOX_CLOCK_H_

#include <optional>

#include "absl/time/time.h"

namespace outbox {

// A source of wall-clock time, and of a monotonic clock for intervals.
//
// Implementations must be safe for concurrent use by multiple threads: the
// store and the delivery agent read the clock from different threads.
class Clock {
 public:
  virtual ~Clock() = default;

  // Returns the current wall-clock time. It may jump: boards without a
  // real-time clock boot with a stale time and are corrected by NTP later.
  virtual absl::Time Now() = 0;

  // Returns the time on a clock that only moves forward at a steady rate
  // (CLOCK_MONOTONIC), from an arbitrary origin: only differences mean
  // anything. The store and the agent schedule with it, so that setting the
  // wall clock neither stalls nor rushes deliveries. The default reads Now(),
  // which gives no such protection; the system clock overrides it.
  virtual absl::Duration Monotonic() { return Now() - absl::UnixEpoch(); }

  // Whether the clock is known to be synchronized to a time source: true or
  // false when the implementation can tell (the system clock asks the
  // kernel, adjtimex(2): NTP and systemd-timesyncd mark it synchronized),
  // nullopt when it cannot. The default cannot.
  virtual std::optional<bool> Synchronized() { return std::nullopt; }
};

// Returns the system clock (absl::Now()). Never null; lives for the whole
// process and must not be deleted.
Clock* SystemClock();

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_INCLUDE_OUTBOX_CLOCK_H_
