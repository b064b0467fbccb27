// Copyright (c) edge-outbox authors.
//
// Clock: where the outbox reads wall-clock time. Injected through
// Options::clock so that tests can move time by hand.

#ifndef OUTBOX_PLATFORM_INCLUDE_OUTBOX_CLOCK_H_
#define OUTBOX_PLATFORM_INCLUDE_OUTBOX_CLOCK_H_

#include "absl/time/time.h"

namespace outbox {

// A source of wall-clock time.
//
// Implementations must be safe for concurrent use by multiple threads: the
// store and the delivery agent read the clock from different threads.
class Clock {
 public:
  virtual ~Clock() = default;

  // Returns the current wall-clock time.
  virtual absl::Time Now() = 0;
};

// Returns the system clock (absl::Now()). Never null; lives for the whole
// process and must not be deleted.
Clock* SystemClock();

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_INCLUDE_OUTBOX_CLOCK_H_
