// Copyright (c) edge-outbox authors.
//
// How a step of the demo waits for what it tells: it polls the processes
// and logs every few milliseconds, and gives up when nothing moves.

#ifndef OUTBOX_TOOLS_DEMO_WAIT_H_
#define OUTBOX_TOOLS_DEMO_WAIT_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace outbox::demo {

// What a wait polls. Plain data.
struct Waiter {
  std::function<bool()> interrupted;   // a signal handler's flag
  std::function<absl::Status()> tick;  // one round: poll, redraw
  std::function<int64_t()> progress;   // anything that moves
  absl::Duration stall_timeout = absl::Seconds(120);
  std::string logs;  // where to look, for the stall error
};

// Ticks until `done` says so. Errors: the tick's; kCancelled when
// interrupted; kDeadlineExceeded naming `step` when progress stays the same
// for stall_timeout.
absl::Status WaitUntil(const Waiter& waiter, absl::string_view step,
                       const std::function<bool()>& done);

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_WAIT_H_
