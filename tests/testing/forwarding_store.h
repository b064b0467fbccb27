// Copyright (c) edge-outbox authors.
//
// ForwardingStore: a Store that passes every call to another one. Tests
// derive from it to change one or two calls (a failure, a delay) and keep
// the rest real.

#ifndef OUTBOX_TESTS_TESTING_FORWARDING_STORE_H_
#define OUTBOX_TESTS_TESTING_FORWARDING_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "outbox/store.h"

namespace outbox::testing {

class ForwardingStore : public Store {
 public:
  // `base` is borrowed and must outlive this.
  explicit ForwardingStore(Store* base) : base_(base) {}

  absl::Status Replay(absl::string_view id) override {
    return base_->Replay(id);
  }
  absl::Status Close() override { return base_->Close(); }
  absl::StatusOr<CommitResult> Commit(const Txn& t) override {
    return base_->Commit(t);
  }
  absl::StatusOr<std::string> Get(absl::string_view t,
                                  absl::string_view k) override {
    return base_->Get(t, k);
  }
  absl::StatusOr<DueEvents> NextDue(
      size_t limit, absl::FunctionRef<LaneGate(const Lane&)> gate,
      absl::FunctionRef<bool(uint64_t)> skip) override {
    return base_->NextDue(limit, gate, skip);
  }
  void Relane(const PendingEvent& e, absl::string_view target,
              bool saw_cancel) override {
    base_->Relane(e, target, saw_cancel);
  }
  absl::StatusOr<std::vector<PendingEvent>> KeyFollowers(
      const PendingEvent& head, size_t limit) override {
    return base_->KeyFollowers(head, limit);
  }
  absl::StatusOr<SettleResult> Settle(
      const std::vector<Settlement>& s) override {
    return base_->Settle(s);
  }
  absl::Status Sync() override { return base_->Sync(); }
  absl::Status RequestSync(uint64_t mark) override {
    return base_->RequestSync(mark);
  }
  uint64_t DurableMark() const override { return base_->DurableMark(); }
  uint64_t CancelCount() const override { return base_->CancelCount(); }
  absl::Status RecordAttempt(const PendingEvent& e,
                             const AttemptRecord& a) override {
    return base_->RecordAttempt(e, a);
  }
  absl::Status MarkDelivered(const PendingEvent& e) override {
    return base_->MarkDelivered(e);
  }
  absl::Status MoveToDeadLetters(const PendingEvent& e,
                                 absl::string_view r) override {
    return base_->MoveToDeadLetters(e, r);
  }
  const std::vector<EventClass>& event_classes() const override {
    return base_->event_classes();
  }
  absl::StatusOr<size_t> ExpirePending(absl::Time now, size_t limit) override {
    return base_->ExpirePending(now, limit);
  }
  absl::Status Quarantine(uint64_t seq) override {
    return base_->Quarantine(seq);
  }
  absl::StatusOr<std::vector<PendingEvent>> ListPending(size_t n) override {
    return base_->ListPending(n);
  }
  absl::StatusOr<std::vector<DeadLetter>> ListDeadLetters(size_t n) override {
    return base_->ListDeadLetters(n);
  }
  absl::StatusOr<DeadLetter> FindDeadLetter(absl::string_view id) override {
    return base_->FindDeadLetter(id);
  }
  absl::StatusOr<PendingEvent> FindPending(absl::string_view id) override {
    return base_->FindPending(id);
  }
  absl::StatusOr<size_t> PurgeExpiredIdempotencyKeys() override {
    return base_->PurgeExpiredIdempotencyKeys();
  }
  absl::StatusOr<size_t> PurgeDeadLetters(absl::Duration older_than) override {
    return base_->PurgeDeadLetters(older_than);
  }
  absl::Status PurgeDeadLetter(absl::string_view id) override {
    return base_->PurgeDeadLetter(id);
  }
  absl::StatusOr<Stats> GetStats() override { return base_->GetStats(); }
  absl::StatusOr<std::vector<LanePending>> PendingByLane() override {
    return base_->PendingByLane();
  }
  absl::Time WallClockMark() const override { return base_->WallClockMark(); }
  absl::Time StoreClockNow() const override { return base_->StoreClockNow(); }
  absl::Status ResetWallClockMark() override {
    return base_->ResetWallClockMark();
  }
  absl::StatusOr<WorkflowRecord> GetWorkflow(absl::string_view id) override {
    return base_->GetWorkflow(id);
  }
  absl::StatusOr<std::vector<std::string>> ListWorkflowResults(
      absl::string_view id, size_t limit) override {
    return base_->ListWorkflowResults(id, limit);
  }
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
  ListWorkflowDefinitions() override {
    return base_->ListWorkflowDefinitions();
  }
  absl::StatusOr<bool> HasWorkflowStates() override {
    return base_->HasWorkflowStates();
  }
  absl::StatusOr<std::vector<std::string>> PurgeWorkflowDefinitions(
      const std::vector<std::string>& keep) override {
    return base_->PurgeWorkflowDefinitions(keep);
  }
  absl::Status RetryWorkflow(absl::string_view id,
                             absl::string_view state) override {
    return base_->RetryWorkflow(id, state);
  }
  absl::StatusOr<size_t> PurgeFinishedWorkflows(
      absl::Duration older_than) override {
    return base_->PurgeFinishedWorkflows(older_than);
  }
  absl::StatusOr<VerifyReport> Verify() override { return base_->Verify(); }
  void SetWakeup(std::function<void()> w) override {
    base_->SetWakeup(std::move(w));
  }

 protected:
  Store* const base_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_FORWARDING_STORE_H_
