// Copyright (c) edge-outbox authors.
//
// ObservedStore: a Store that forwards every call to another and tells an
// AckLedger when an acknowledgement (MarkDelivered, or a delivered event in
// Settle) or a workflow step's 2xx result (a Settle row with outcome
// "done") was made and returned, and when a synced write returned, so that
// the power-cut soak knows which of them were durable when the power went.

#ifndef OUTBOX_TESTS_CRASH_OBSERVED_STORE_H_
#define OUTBOX_TESTS_CRASH_OBSERVED_STORE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "outbox/store.h"
#include "tests/crash/soak_acks.h"

namespace outbox::testing {

// Thread-safe as Store is: the soak's committer threads commit through it at
// once. Its calls to the ledger and to `receipts` are serialized under one
// mutex, never held across a call to the base store.
class ObservedStore final : public Store {
 public:
  // `base` and `ledger` are borrowed and must outlive this; `receipts`
  // returns the receiver's log size (see AckLedger).
  ObservedStore(Store* base, AckLedger* ledger,
                std::function<size_t()> receipts);

  absl::Status Close() override;
  absl::StatusOr<CommitResult> Commit(const Txn& txn) override;
  absl::StatusOr<std::string> Get(absl::string_view table,
                                  absl::string_view key) override;
  absl::StatusOr<DueEvents> NextDue(
      size_t limit, absl::FunctionRef<LaneGate(const Lane&)> gate,
      absl::FunctionRef<bool(uint64_t seq)> skip) override;
  void Relane(const PendingEvent& event, absl::string_view target,
              bool saw_cancel) override;
  absl::StatusOr<std::vector<PendingEvent>> KeyFollowers(
      const PendingEvent& head, size_t limit) override;
  absl::StatusOr<SettleResult> Settle(
      const std::vector<Settlement>& settlements) override;
  absl::Status Sync() override;
  absl::Status RequestSync(uint64_t mark) override {
    return base_->RequestSync(mark);
  }
  // Tells the ledger which workflow results the mark read covers: the agent
  // plans a next step only after reading it here.
  uint64_t DurableMark() const override;
  uint64_t CancelCount() const override { return base_->CancelCount(); }
  absl::Status RecordAttempt(const PendingEvent& event,
                             const AttemptRecord& attempt) override;
  absl::Status MarkDelivered(const PendingEvent& event) override;
  absl::Status MoveToDeadLetters(const PendingEvent& event,
                                 absl::string_view reason) override;
  absl::Status Quarantine(uint64_t seq) override;
  absl::StatusOr<size_t> ExpirePending(absl::Time now, size_t limit) override;
  const std::vector<EventClass>& event_classes() const override {
    return base_->event_classes();
  }
  absl::Status Replay(absl::string_view event_id) override;
  absl::StatusOr<std::vector<PendingEvent>> ListPending(size_t limit) override;
  absl::StatusOr<std::vector<DeadLetter>> ListDeadLetters(
      size_t limit) override;
  absl::StatusOr<DeadLetter> FindDeadLetter(absl::string_view id) override;
  absl::StatusOr<PendingEvent> FindPending(absl::string_view id) override;
  absl::StatusOr<size_t> PurgeExpiredIdempotencyKeys() override;
  absl::StatusOr<size_t> PurgeDeadLetters(absl::Duration older_than) override;
  absl::Status PurgeDeadLetter(absl::string_view id) override;
  absl::StatusOr<Stats> GetStats() override;
  absl::StatusOr<std::vector<LanePending>> PendingByLane() override {
    return base_->PendingByLane();
  }
  absl::Time WallClockMark() const override { return base_->WallClockMark(); }
  absl::Time StoreClockNow() const override { return base_->StoreClockNow(); }
  absl::Status ResetWallClockMark() override {
    return base_->ResetWallClockMark();
  }
  absl::StatusOr<WorkflowRecord> GetWorkflow(
      absl::string_view event_id) override;
  absl::StatusOr<std::vector<std::string>> ListWorkflowResults(
      absl::string_view event_id, size_t limit) override;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
  ListWorkflowDefinitions() override;
  absl::StatusOr<bool> HasWorkflowStates() override;
  absl::StatusOr<std::vector<std::string>> PurgeWorkflowDefinitions(
      const std::vector<std::string>& keep) override;
  absl::Status RetryWorkflow(absl::string_view event_id,
                             absl::string_view state) override;
  absl::StatusOr<size_t> PurgeFinishedWorkflows(
      absl::Duration older_than) override;
  absl::StatusOr<VerifyReport> Verify() override { return base_->Verify(); }
  void SetWakeup(std::function<void()> wakeup) override;

 private:
  // A write returned `s`; if it wrote anything (`wrote`) with sync and
  // succeeded, it covers the acks before it.
  void Synced(const absl::Status& s, bool wrote = true)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A synced write returned OK: tells the ledger.
  void Covered() ABSL_LOCKS_EXCLUDED(mu_);

  Store* const base_;
  mutable absl::Mutex mu_;
  AckLedger* const ledger_ ABSL_PT_GUARDED_BY(mu_);
  const std::function<size_t()> receipts_;  // called under mu_
  // Workflow results returned by Settle and not covered yet, with the mark
  // of their write (SettleResult::written), oldest first.
  mutable std::deque<std::pair<uint64_t, std::string>> unsynced_results_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_OBSERVED_STORE_H_
