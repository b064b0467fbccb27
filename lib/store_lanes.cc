// Copyright (c) edge-outbox authors.
//
// The targeted lanes of StoreImpl (Store::Relane): a workflow event that
// waits for one closed destination is moved, in memory only, to a lane of
// its own target, which the agent closes with one gate call.

#include <algorithm>
#include <string>

#include "absl/hash/hash.h"
#include "lib/store_impl.h"

namespace outbox {

void StoreImpl::Relane(const PendingEvent& event, absl::string_view target,
                       bool saw_cancel) {
  if (!CheckOpen().ok()) return;
  absl::MutexLock l(&mu_);
  if (!DbReady().ok() || index_.Find(event.seq) == nullptr) return;
  if (!target.empty() && !saw_cancel) {
    // Under mu_, ordered with a cancel's write and its UntargetIdLocked: a
    // cancel written since the caller read the workflow is seen here (or
    // untargets the event after this), so it never waits behind `target`.
    const absl::StatusOr<bool> cancelled = CancelStoredLocked(event.id);
    if (!cancelled.ok() || *cancelled) target = {};
  }
  index_.Relane(event.seq,
                index_.LaneOf(event.destination, event.type, target));
  if (target.empty()) return;
  targeted_[TargetedKey(event.id)] = event.seq;
  if (targeted_.size() < targeted_sweep_at_) return;
  // Drop what left the queue or its target since: O(1) amortized.
  for (auto it = targeted_.begin(); it != targeted_.end();) {
    const QueueIndex::Slot* slot = index_.Find(it->second);
    if (slot == nullptr || index_.lane(slot->lane).target.empty()) {
      targeted_.erase(it++);
    } else {
      ++it;
    }
  }
  targeted_sweep_at_ = std::max<size_t>(1024, 2 * targeted_.size());
}

uint64_t StoreImpl::TargetedKey(absl::string_view event_id) {
  return absl::HashOf(event_id);
}

void StoreImpl::UntargetLocked(uint64_t seq) {
  const QueueIndex::Slot* slot = index_.Find(seq);
  if (slot == nullptr || index_.lane(slot->lane).target.empty()) return;
  // Copied: LaneOf may add a lane, which moves the others.
  const QueueIndex::LaneInfo info = index_.lane(slot->lane);
  index_.Relane(seq, index_.LaneOf(info.destination, info.type));
}

void StoreImpl::UntargetIdLocked(const std::string& event_id) {
  auto it = targeted_.find(TargetedKey(event_id));
  if (it == targeted_.end()) return;
  UntargetLocked(it->second);
  targeted_.erase(it);
}

}  // namespace outbox
