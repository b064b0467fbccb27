// Copyright (c) edge-outbox authors.
//
// The agent's part in the store's event classes (Options::event_classes):
// the store evicts at commit and expires when asked; the agent asks, with a
// time it trusts, and says in the log what was given up.

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/agent_impl.h"
#include "base/status_macros.h"

namespace outbox {
namespace {

// Expired per store write: a day's backlog expiring at once is written in
// bounded batches, one per round, and delivery goes on between them.
constexpr size_t kExpireBatch = 512;

bool AnyExpiry(const std::vector<EventClass>& classes) {
  return std::any_of(classes.begin(), classes.end(), [](const EventClass& c) {
    return c.expire_after > absl::ZeroDuration();
  });
}

bool AnyEviction(const std::vector<EventClass>& classes) {
  return std::any_of(classes.begin(), classes.end(), [](const EventClass& c) {
    return c.on_full == EventClass::OnFull::kDropOldest;
  });
}

}  // namespace

absl::Status AgentImpl::CheckClasses(absl::Time steady) {
  const std::vector<EventClass>& classes = store_->event_classes();
  if (!AnyExpiry(classes) && !AnyEviction(classes)) {
    next_class_check_ = absl::InfiniteFuture();  // nothing to check, ever
    return absl::OkStatus();
  }
  if (steady < next_class_check_) return absl::OkStatus();
  next_class_check_ = steady + kClassCheck;
  if (AnyExpiry(classes)) OUTBOX_RETURN_IF_ERROR(Expire());
  // An expiry larger than a batch goes on next round (Expire): the burst is
  // said once, when it is done, not once a batch.
  if (next_class_check_ != absl::InfinitePast()) ReportGivenUp();
  return absl::OkStatus();
}

absl::Time AgentImpl::ExpiryNow() {
  const absl::Time wall = clock_->Now();
  const absl::Time steady = Steady();
  if (expiry_wall_ == absl::InfinitePast()) {
    expiry_wall_ = wall;
    expiry_steady_ = steady;
  }
  const absl::Time bound = expiry_wall_ + (steady - expiry_steady_);
  // A clock set back is believed (expiry waits longer); one set ahead is
  // not believed past the monotonic clock.
  if (wall < bound) {
    expiry_wall_ = wall;
    expiry_steady_ = steady;
  }
  return std::min(wall, bound);
}

absl::Status AgentImpl::Expire() {
  // Only a clock the agent trusts, and, where the kernel can tell, one it
  // keeps synchronized: a board that booted with a wrong time far ahead
  // would otherwise expire the whole backlog.
  if (!clock_trust_.trusted() || clock_->Synchronized() == false) {
    expiry_wall_ = absl::InfinitePast();  // start afresh once trusted
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> expired =
      store_->ExpirePending(ExpiryNow(), kExpireBatch);
  if (!expired.ok()) return PauseIfDiskFull(expired.status());
  // More may be waiting: look again next round, not in kClassCheck.
  if (*expired == kExpireBatch) next_class_check_ = absl::InfinitePast();
  return absl::OkStatus();
}

void AgentImpl::ReportGivenUp() {
  absl::StatusOr<Stats> stats = store_->GetStats();
  if (!stats.ok()) return;  // the next check tries again
  auto report = [&](std::optional<uint64_t>* seen, uint64_t now, LogEvent ev,
                    absl::string_view what) {
    if (seen->has_value() && now > **seen) {
      Log(LogSeverity::kWarning, ev,
          absl::StrCat(now - **seen, " event(s) ", what,
                       " since the last "
                       "check (",
                       now, " since the store was created); ",
                       "outboxctl dead shows the kept ones"));
    }
    *seen = now;
  };
  report(&evicted_seen_, stats->evicted_total, LogEvent::kEventsEvicted,
         "evicted by their class (on_full: drop_oldest)");
  report(&expired_seen_, stats->expired_total, LogEvent::kEventsExpired,
         "expired by their class's expire_after");
}

}  // namespace outbox
