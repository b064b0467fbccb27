// Copyright (c) edge-outbox authors.

#include "tools/demo/wait.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"

namespace outbox::demo {
namespace {

constexpr absl::Duration kTick = absl::Milliseconds(10);

}  // namespace

absl::Status WaitUntil(const Waiter& waiter, absl::string_view step,
                       const std::function<bool()>& done) {
  int64_t mark = -1;
  absl::Time moved = absl::Now();
  for (;;) {
    if (waiter.interrupted()) return absl::CancelledError("interrupted");
    OUTBOX_RETURN_IF_ERROR(waiter.tick());
    if (done()) return absl::OkStatus();
    const int64_t progress = waiter.progress();
    if (progress != mark) {
      mark = progress;
      moved = absl::Now();
    } else if (absl::Now() - moved > waiter.stall_timeout) {
      return absl::DeadlineExceededError(absl::StrCat(
          "step \"", step, "\" made no progress for ",
          absl::FormatDuration(waiter.stall_timeout), "; see ", waiter.logs));
    }
    absl::SleepFor(kTick);
  }
}

}  // namespace outbox::demo
