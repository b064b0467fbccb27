// Copyright (c) edge-outbox authors.

#include "tests/crash/observed_store.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "proto/storage.pb.h"

namespace outbox::testing {
namespace {

// Whether the store syncs each write. The soak opens it with Options::sync
// (the default), under which every write but Settle, MarkDelivered
// included, returns only after the WAL is synced. (A broken variant that
// skips a sync is what the soak must catch, so it is not believed here.)
// Settle is never synced: its acknowledgements are covered only by the next
// synced write (a Commit, Sync(), Close).
constexpr bool kAcksAreSynced = true;
constexpr bool kOtherWritesAreSynced = true;

bool IsWorkflow(const Settlement& s) {
  return !s.workflow_state.empty() || !s.workflow_results.empty();
}

// Whether a workflow's settlement ends it for good: a compensated workflow
// is never queued again (a later cancel is a no-op), a completed one may be.
bool Final(const Settlement& s) {
  storage::WorkflowState state;
  return state.ParseFromString(s.workflow_state) &&
         state.phase() == storage::WORKFLOW_PHASE_COMPENSATED;
}

}  // namespace

ObservedStore::ObservedStore(Store* base, AckLedger* ledger,
                             std::function<size_t()> receipts)
    : base_(base), ledger_(ledger), receipts_(std::move(receipts)) {}

void ObservedStore::Synced(const absl::Status& s, bool wrote) {
  if (s.ok() && wrote && kOtherWritesAreSynced) Covered();
}

void ObservedStore::Covered() {
  absl::MutexLock l(&mu_);
  ledger_->OnSyncedWrite(receipts_());
  unsynced_results_.clear();
}

uint64_t ObservedStore::DurableMark() const {
  const uint64_t durable = base_->DurableMark();
  absl::MutexLock l(&mu_);
  while (!unsynced_results_.empty() &&
         unsynced_results_.front().first <= durable) {
    ledger_->OnResultDurable(unsynced_results_.front().second, receipts_());
    unsynced_results_.pop_front();
  }
  return durable;
}

absl::Status ObservedStore::Close() {
  // Close syncs the WAL: whatever returned before it is durable.
  absl::Status s = base_->Close();
  if (s.ok()) Covered();
  return s;
}

absl::StatusOr<CommitResult> ObservedStore::Commit(const Txn& txn) {
  if (!txn.cancels().empty()) {
    // Noted before the write: a cut inside Commit may still keep it.
    absl::MutexLock l(&mu_);
    for (const Txn::CancelOp& c : txn.cancels()) {
      ledger_->OnCancelAttempted(c.event_id);
    }
  }
  absl::StatusOr<CommitResult> result = base_->Commit(txn);
  Synced(result.status(), result.ok() && !result->duplicate);
  return result;
}

absl::StatusOr<std::string> ObservedStore::Get(absl::string_view table,
                                               absl::string_view key) {
  return base_->Get(table, key);
}

absl::StatusOr<DueEvents> ObservedStore::NextDue(
    size_t limit, absl::FunctionRef<LaneGate(const Lane&)> gate,
    absl::FunctionRef<bool(uint64_t seq)> skip) {
  return base_->NextDue(limit, gate, skip);
}

void ObservedStore::Relane(const PendingEvent& event, absl::string_view target,
                           bool saw_cancel) {
  base_->Relane(event, target, saw_cancel);
}

absl::StatusOr<std::vector<PendingEvent>> ObservedStore::KeyFollowers(
    const PendingEvent& head, size_t limit) {
  return base_->KeyFollowers(head, limit);
}

absl::StatusOr<SettleResult> ObservedStore::Settle(
    const std::vector<Settlement>& settlements) {
  // A workflow's settlement is no acknowledgement of its event in the
  // ledger's plain sense (a completed workflow may be queued again by a
  // cancel): it acknowledges its step's or revert's 2xx result, and its last
  // one is checked apart (AckLedger::OnWorkflowDeliveryReturned).
  auto acks = [](const Settlement& s) {
    return s.kind == Settlement::Kind::kDelivered && !IsWorkflow(s);
  };
  {
    absl::MutexLock l(&mu_);
    for (const Settlement& s : settlements) {
      if (acks(s)) ledger_->OnCalled(s.event.id);
    }
  }
  absl::StatusOr<SettleResult> result = base_->Settle(settlements);
  if (!result.ok()) return result;
  const absl::flat_hash_set<std::string> gone(result->not_pending.begin(),
                                              result->not_pending.end());
  absl::MutexLock l(&mu_);
  for (const Settlement& s : settlements) {
    if (gone.contains(s.event.id)) continue;
    if (acks(s)) ledger_->OnReturned(s.event.id, /*synced=*/false, receipts_());
    if (IsWorkflow(s) && s.kind == Settlement::Kind::kDelivered) {
      ledger_->OnWorkflowDeliveryReturned(s.event.id, Final(s));
    }
    for (const std::string& encoded : s.workflow_results) {
      storage::StepResult row;
      if (row.ParseFromString(encoded) && row.outcome() == "done") {
        ledger_->OnResultReturned(row.request_id());
        unsynced_results_.emplace_back(result->written, row.request_id());
      }
    }
  }
  return result;
}

absl::Status ObservedStore::Sync() {
  absl::Status s = base_->Sync();
  if (s.ok()) Covered();
  return s;
}

absl::Status ObservedStore::RecordAttempt(const PendingEvent& event,
                                          const AttemptRecord& attempt) {
  absl::Status s = base_->RecordAttempt(event, attempt);
  Synced(s);
  return s;
}

absl::Status ObservedStore::MarkDelivered(const PendingEvent& event) {
  {
    absl::MutexLock l(&mu_);
    ledger_->OnCalled(event.id);
  }
  absl::Status s = base_->MarkDelivered(event);
  if (s.ok()) {
    {
      absl::MutexLock l(&mu_);
      ledger_->OnReturned(event.id, kAcksAreSynced, receipts_());
    }
    if (kAcksAreSynced) Synced(s);
  }
  return s;
}

absl::Status ObservedStore::MoveToDeadLetters(const PendingEvent& event,
                                              absl::string_view reason) {
  absl::Status s = base_->MoveToDeadLetters(event, reason);
  Synced(s);
  return s;
}

absl::StatusOr<size_t> ObservedStore::ExpirePending(absl::Time now,
                                                    size_t limit) {
  absl::StatusOr<size_t> n = base_->ExpirePending(now, limit);
  Synced(n.status());
  return n;
}

absl::Status ObservedStore::Quarantine(uint64_t seq) {
  absl::Status s = base_->Quarantine(seq);
  Synced(s);
  return s;
}

absl::Status ObservedStore::Replay(absl::string_view event_id) {
  absl::Status s = base_->Replay(event_id);
  Synced(s);
  return s;
}

absl::StatusOr<std::vector<PendingEvent>> ObservedStore::ListPending(
    size_t limit) {
  return base_->ListPending(limit);
}

absl::StatusOr<std::vector<DeadLetter>> ObservedStore::ListDeadLetters(
    size_t limit) {
  return base_->ListDeadLetters(limit);
}

absl::StatusOr<DeadLetter> ObservedStore::FindDeadLetter(absl::string_view id) {
  return base_->FindDeadLetter(id);
}

absl::StatusOr<PendingEvent> ObservedStore::FindPending(absl::string_view id) {
  return base_->FindPending(id);
}

absl::StatusOr<size_t> ObservedStore::PurgeExpiredIdempotencyKeys() {
  absl::StatusOr<size_t> purged = base_->PurgeExpiredIdempotencyKeys();
  Synced(purged.status(), purged.ok() && *purged > 0);
  return purged;
}

absl::StatusOr<size_t> ObservedStore::PurgeDeadLetters(
    absl::Duration older_than) {
  absl::StatusOr<size_t> purged = base_->PurgeDeadLetters(older_than);
  Synced(purged.status(), purged.ok() && *purged > 0);
  return purged;
}

absl::StatusOr<WorkflowRecord> ObservedStore::GetWorkflow(
    absl::string_view event_id) {
  return base_->GetWorkflow(event_id);
}

absl::StatusOr<std::vector<std::string>> ObservedStore::ListWorkflowResults(
    absl::string_view event_id, size_t limit) {
  return base_->ListWorkflowResults(event_id, limit);
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
ObservedStore::ListWorkflowDefinitions() {
  return base_->ListWorkflowDefinitions();
}

absl::StatusOr<bool> ObservedStore::HasWorkflowStates() {
  return base_->HasWorkflowStates();
}

absl::StatusOr<std::vector<std::string>>
ObservedStore::PurgeWorkflowDefinitions(const std::vector<std::string>& keep) {
  absl::StatusOr<std::vector<std::string>> purged =
      base_->PurgeWorkflowDefinitions(keep);
  Synced(purged.status(), purged.ok() && !purged->empty());
  return purged;
}

absl::Status ObservedStore::RetryWorkflow(absl::string_view event_id,
                                          absl::string_view state) {
  absl::Status s = base_->RetryWorkflow(event_id, state);
  Synced(s);
  return s;
}

absl::StatusOr<size_t> ObservedStore::PurgeFinishedWorkflows(
    absl::Duration older_than) {
  absl::StatusOr<size_t> purged = base_->PurgeFinishedWorkflows(older_than);
  Synced(purged.status(), purged.ok() && *purged > 0);
  return purged;
}

absl::Status ObservedStore::PurgeDeadLetter(absl::string_view id) {
  absl::Status s = base_->PurgeDeadLetter(id);
  Synced(s);
  return s;
}

absl::StatusOr<Stats> ObservedStore::GetStats() { return base_->GetStats(); }

void ObservedStore::SetWakeup(std::function<void()> wakeup) {
  base_->SetWakeup(std::move(wakeup));
}

}  // namespace outbox::testing
