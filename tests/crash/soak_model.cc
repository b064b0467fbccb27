// Copyright (c) edge-outbox authors.
//
// SoakModel bookkeeping: transactions as they are committed, idempotency
// key owners, purges. The checks against a reopened store are in
// soak_checks.cc.

#include "tests/crash/soak_model.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace outbox::testing {

std::string SoakModel::Describe(const ModelTxn& txn) {
  static constexpr const char* kStates[] = {"in doubt", "committed", "absent",
                                            "duplicate"};
  return absl::StrCat("txn t", txn.serial, " (", kStates[int(txn.state)],
                      ", commit #", txn.commit_order, " in cycle ", txn.cycle,
                      txn.txn.idempotency_key().empty()
                          ? ""
                          : absl::StrCat(", key ", txn.txn.idempotency_key()),
                      ")");
}

size_t SoakModel::Add(ModelTxn txn) {
  const size_t index = txns_.size();
  for (size_t i = 0; i < txn.txn.events().size(); ++i) {
    const Txn::EmittedEvent& emitted = txn.txn.events()[i];
    ModelEvent& e = events_[emitted.id];
    e.txn = index;
    e.index = i;
    e.workflow = emitted.event.type == kSoakWorkflowType;
    if (e.workflow) workflows_.AddEvent(emitted.id, txn.serial, i);
  }
  txns_.push_back(std::move(txn));
  return index;
}

int64_t SoakModel::OwnerOf(const std::string& key) const {
  auto it = owners_.find(key);
  return it == owners_.end() ? -1 : static_cast<int64_t>(it->second);
}

void SoakModel::MakeOwner(size_t index, std::vector<Violation>* out) {
  const ModelTxn& t = txns_[index];
  const std::string& key = t.txn.idempotency_key();
  if (key.empty()) return;
  const int64_t owner = OwnerOf(key);
  if (owner >= 0 && owner != static_cast<int64_t>(index)) {
    out->push_back(
        {ViolationKind::kIdempotencyBroken,
         absl::StrCat(Describe(t), " is in the store beside ",
                      Describe(txns_[owner]), " with the same key")});
    return;
  }
  owners_[key] = index;
  committed_keys_.emplace_back(t.commit_time, key);
}

void SoakModel::OnCommit(size_t index,
                         const absl::StatusOr<CommitResult>& result,
                         uint64_t order, absl::Time now, int cycle,
                         bool power_on, std::vector<Violation>* out) {
  ModelTxn& t = txns_[index];
  const std::string& key = t.txn.idempotency_key();
  const int64_t owner = key.empty() ? -1 : OwnerOf(key);
  std::vector<std::string> ids;
  for (const Txn::EmittedEvent& e : t.txn.events()) ids.push_back(e.id);

  if (!result.ok()) {
    if (power_on) {
      out->push_back({ViolationKind::kUnexpectedError,
                      absl::StrCat("commit of ", Describe(t),
                                   " failed with the power on: ",
                                   result.status().ToString())});
    }
    // A retry of a transaction already known to be in the store changes
    // nothing; anything else is settled by the next reopen.
    if (t.state == ModelTxn::State::kCommitted) return;
    t.state = ModelTxn::State::kInDoubt;
    t.commit_order = order;
    t.commit_time = now;
    t.cycle = cycle;
    in_doubt_.push_back(index);
    return;
  }

  if (result->duplicate) {
    if (owner < 0) {
      out->push_back({ViolationKind::kIdempotencyBroken,
                      absl::StrCat("commit of ", Describe(t),
                                   " returned duplicate, but no commit with "
                                   "its key is in the store")});
    } else {
      std::vector<std::string> first;
      for (const Txn::EmittedEvent& e : txns_[owner].txn.events()) {
        first.push_back(e.id);
      }
      if (result->event_ids != first ||
          result->response != txns_[owner].txn.response()) {
        out->push_back({ViolationKind::kIdempotencyBroken,
                        absl::StrCat("duplicate commit of ", Describe(t),
                                     " did not return the event ids and "
                                     "response of ",
                                     Describe(txns_[owner]))});
      }
    }
    if (owner != static_cast<int64_t>(index)) {
      t.state = ModelTxn::State::kDuplicate;
      t.commit_order = order;
      t.cycle = cycle;
      open_.push_back(index);
    }
    return;
  }

  if (owner >= 0) {
    out->push_back({ViolationKind::kIdempotencyBroken,
                    absl::StrCat("commit of ", Describe(t),
                                 " wrote a second set of events for the key "
                                 "of ",
                                 Describe(txns_[owner]))});
    return;
  }
  if (t.state == ModelTxn::State::kCommitted) {
    out->push_back({ViolationKind::kIdempotencyBroken,
                    absl::StrCat("retried commit of ", Describe(t),
                                 " was written a second time")});
    return;
  }
  if (result->event_ids != ids) {
    out->push_back({ViolationKind::kEventChanged,
                    absl::StrCat("commit of ", Describe(t),
                                 " returned other ids than Txn::Emit gave")});
  }
  t.state = ModelTxn::State::kCommitted;
  t.acknowledged = true;
  t.commit_order = order;
  t.commit_time = now;
  t.cycle = cycle;
  open_.push_back(index);
  MakeOwner(index, out);
  OnCommitted(index);
}

void SoakModel::OnCommitted(size_t index) {
  const ModelTxn& t = txns_[index];
  for (const Txn::EmittedEvent& e : t.txn.events()) {
    if (events_[e.id].workflow) workflows_.OnCommitted(e.id);
  }
  for (const Txn::CancelOp& c : t.txn.cancels()) {
    workflows_.OnCancelCommitted(c.event_id);
    auto it = events_.find(c.event_id);
    if (it == events_.end()) continue;
    ModelTxn& owner = txns_[it->second.txn];
    if (owner.settled) {
      owner.settled = false;
      open_.push_back(it->second.txn);
    }
  }
}

void SoakModel::AllowPurge(const std::vector<DeadLetter>& dead,
                           absl::Duration older_than) {
  for (const DeadLetter& d : dead) {
    auto it = events_.find(d.event.id);
    if (it != events_.end() && d.dead_for > older_than) {
      it->second.purge_allowed = true;
    }
  }
}

std::vector<std::string> SoakModel::SortBySerial(
    const std::vector<DeadLetter>& dead) const {
  std::vector<std::tuple<uint64_t, size_t, std::string>> keyed;
  for (const DeadLetter& d : dead) {
    auto it = events_.find(d.event.id);
    if (it == events_.end()) {
      keyed.emplace_back(UINT64_MAX, 0, d.event.id);
    } else {
      keyed.emplace_back(txns_[it->second.txn].serial, it->second.index,
                         d.event.id);
    }
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::string> ids;
  for (auto& [serial, index, id] : keyed) ids.push_back(std::move(id));
  return ids;
}

}  // namespace outbox::testing
