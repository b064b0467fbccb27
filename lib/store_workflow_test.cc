// Copyright (c) edge-outbox authors.
//
// The store's side of workflows: step settlements keep the event pending
// with a fresh retry budget, state and result rows survive a reopen, a
// cancel queues a completed workflow again (once), a cancel that races the
// last step is not lost, replay refuses a workflow, RetryWorkflow resumes
// one, and retention deletes finished workflows only.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/storage.pb.h"
#include "tests/testing/store_fixture.h"
#include "tests/testing/workflow_state.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeEvent;

std::string StateWith(storage::WorkflowPhase phase, uint32_t next_step,
                      int64_t finished_ms = 0) {
  storage::WorkflowState state;
  state.set_phase(phase);
  state.set_next_step(next_step);
  state.set_finished_unix_ms(finished_ms);
  return state.SerializeAsString();
}

std::string ResultRow(const std::string& step, uint32_t attempt) {
  storage::StepResult row;
  row.set_step(step);
  row.set_attempt(attempt);
  return row.SerializeAsString();
}

class StoreWorkflowTest : public testing::StoreTest {
 protected:
  // Settles `event` as `kind` with `state` and `rows` (numbered from
  // `first`).
  void SettleWith(const PendingEvent& event, Settlement::Kind kind,
                  const std::string& state, std::vector<std::string> rows = {},
                  uint32_t first = 0) {
    Settlement s;
    s.kind = kind;
    s.event = event;
    s.reason = "step failed";
    s.attempt.error = "HTTP 500";
    s.attempt.next_attempt = clock_.Now() + absl::Minutes(1);
    s.workflow_state = state;
    s.workflow_results = std::move(rows);
    s.first_result = first;
    absl::StatusOr<SettleResult> r = store_->Settle({s});
    ASSERT_OUTBOX_OK(r);
    EXPECT_EQ(r->applied, 1u);
    last_kept_ = r->kept_for_cancel;
    ASSERT_OUTBOX_OK(store_->Sync());
  }
  // Commits a workflow event and completes it (one step, delivered).
  std::string CompletedWorkflow(const std::string& key = "till-1") {
    const std::string id = CommitEvent(MakeEvent("order.created", key));
    SettleWith(DueWithId(id), Settlement::Kind::kDelivered,
               StateWith(storage::WORKFLOW_PHASE_COMPLETED, 1,
                         absl::ToUnixMillis(clock_.Now())));
    return id;
  }
  void Cancel(const std::string& id, const std::string& reason) {
    Txn txn;
    txn.Put("sales", "sale-1", "cancelled");
    txn.Cancel(id, reason);
    ASSERT_OUTBOX_OK(store_->Commit(txn));
  }

  // SettleResult::kept_for_cancel of the last SettleWith.
  std::vector<std::string> last_kept_;
};

TEST_F(StoreWorkflowTest, StepDoneKeepsTheEventFirstAndResetsItsAttempts) {
  const std::string id = CommitEvent(MakeEvent("order.created", "till-1"));
  CommitEvent(MakeEvent("order.created", "till-1"));
  SettleWith(DueWithId(id), Settlement::Kind::kAttempt, "");
  clock_.Advance(absl::Minutes(1));
  EXPECT_EQ(DueWithId(id).attempts, 1u);
  SettleWith(DueWithId(id), Settlement::Kind::kStepDone,
             StateWith(storage::WORKFLOW_PHASE_FORWARD, 1),
             {ResultRow("reserve", 1), ResultRow("reserve", 2)});
  Reopen();
  // Due at once, alone for its key, with a fresh budget for step 2.
  PendingEvent again = OnlyDue();
  EXPECT_EQ(again.id, id);
  EXPECT_EQ(again.attempts, 0u);
  EXPECT_EQ(testing::StoredWorkflowState(store_.get(), id).next_step(), 1u);
}

// The store writes most states as the agent encoded them, reading only a
// few fields: one that does not decode is still refused, and the batch,
// its result rows too, is not written.
TEST_F(StoreWorkflowTest, AStateThatDoesNotDecodeIsRefusedAndNothingWritten) {
  const std::string id = CommitEvent(MakeEvent("order.created", "till-1"));
  Settlement s;
  s.kind = Settlement::Kind::kStepDone;
  s.event = DueWithId(id);
  s.workflow_state = StateWith(storage::WORKFLOW_PHASE_FORWARD, 1);
  s.workflow_state.pop_back();  // the last field cut short
  s.workflow_results = {ResultRow("reserve", 1)};
  absl::StatusOr<SettleResult> r = store_->Settle({s});
  ASSERT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("does not decode"));
  Reopen();
  EXPECT_TRUE(absl::IsNotFound(store_->GetWorkflow(id).status()));
  absl::StatusOr<std::vector<std::string>> results =
      store_->ListWorkflowResults(id, 10);
  ASSERT_OUTBOX_OK(results);
  EXPECT_THAT(*results, ::testing::IsEmpty());
  EXPECT_EQ(OnlyDue().id, id);
}

TEST_F(StoreWorkflowTest, ResultRowsComeBackInTheirOrderAfterReopen) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  SettleWith(DueWithId(id), Settlement::Kind::kStepDone,
             StateWith(storage::WORKFLOW_PHASE_FORWARD, 1),
             {ResultRow("reserve", 1)}, 0);
  SettleWith(DueWithId(id), Settlement::Kind::kAttempt, "",
             {ResultRow("fraud", 1)}, 1);
  Reopen();
  absl::StatusOr<std::vector<std::string>> rows =
      store_->ListWorkflowResults(id, 100);
  ASSERT_OUTBOX_OK(rows);
  std::vector<std::string> steps;
  for (const std::string& raw : *rows) {
    storage::StepResult row;
    ASSERT_TRUE(row.ParseFromString(raw));
    steps.push_back(row.step());
  }
  EXPECT_THAT(steps, ElementsAre("reserve", "fraud"));
}

// Definitions ride in the settlement that first writes a state naming one
// (agent/workflow/definitions.h); one row per id, however many name it.
TEST_F(StoreWorkflowTest, DefinitionsAreKeptOncePerIdAndVerified) {
  storage::WorkflowState state;
  state.set_phase(storage::WORKFLOW_PHASE_FORWARD);
  state.set_definition("wd1-a");
  for (const char* key : {"till-1", "till-2"}) {
    const std::string id = CommitEvent(MakeEvent("order.created", key));
    Settlement s;
    s.kind = Settlement::Kind::kStepDone;
    s.event = DueWithId(id);
    s.workflow_state = state.SerializeAsString();
    s.workflow_definition_id = "wd1-a";
    s.workflow_definition = "workflows { event_type: \"order.created\" }";
    ASSERT_OUTBOX_OK(store_->Settle({s}));
  }
  Reopen();
  auto definitions = store_->ListWorkflowDefinitions();
  ASSERT_OUTBOX_OK(definitions);
  ASSERT_EQ(definitions->size(), 1u);
  EXPECT_EQ(definitions->front().first, "wd1-a");
  EXPECT_EQ(definitions->front().second,
            "workflows { event_type: \"order.created\" }");
  auto report = store_->Verify();
  ASSERT_OUTBOX_OK(report);
  EXPECT_THAT(report->problems, ::testing::IsEmpty());

  // A state naming a definition the store lacks is damage.
  const std::string id = CommitEvent(MakeEvent("order.created", "till-3"));
  state.set_definition("wd1-b");
  SettleWith(DueWithId(id), Settlement::Kind::kStepDone,
             state.SerializeAsString());
  report = store_->Verify();
  ASSERT_OUTBOX_OK(report);
  EXPECT_THAT(report->problems,
              ElementsAre(::testing::HasSubstr(
                  "runs under definition \"wd1-b\", which is not stored")));
}

// A definition row is deleted once no stored workflow names it and the
// caller (the agent, with its configuration's ids) does not keep it: a row
// per configuration edit does not pile up for ever.
TEST_F(StoreWorkflowTest, ADefinitionNoWorkflowNamesIsPurged) {
  auto settle_under = [&](const std::string& definition, const char* key) {
    storage::WorkflowState state;
    state.set_phase(storage::WORKFLOW_PHASE_FORWARD);
    state.set_definition(definition);
    Settlement s;
    s.kind = Settlement::Kind::kStepDone;
    s.event = DueWithId(CommitEvent(MakeEvent("order.created", key)));
    s.workflow_state = state.SerializeAsString();
    s.workflow_definition_id = definition;
    s.workflow_definition = "workflows { event_type: \"order.created\" }";
    EXPECT_OUTBOX_OK(store_->Settle({s}));
    return s.event.id;
  };
  settle_under("wd1-old", "till-1");
  settle_under("wd1-new", "till-2");
  const std::string gone = settle_under("wd1-gone", "till-3");
  // The workflow under wd1-gone is rewritten under wd1-new: nobody names
  // wd1-gone any more (as after its workflows were purged).
  {
    storage::WorkflowState state;
    state.set_phase(storage::WORKFLOW_PHASE_FORWARD);
    state.set_definition("wd1-new");
    SettleWith(DueWithId(gone), Settlement::Kind::kStepDone,
               state.SerializeAsString());
  }
  auto purged = store_->PurgeWorkflowDefinitions({"wd1-new"});
  ASSERT_OUTBOX_OK(purged);
  EXPECT_THAT(*purged, ElementsAre("wd1-gone"));
  Reopen();
  auto definitions = store_->ListWorkflowDefinitions();
  ASSERT_OUTBOX_OK(definitions);
  std::vector<std::string> ids;
  for (const auto& [id, text] : *definitions) ids.push_back(id);
  EXPECT_THAT(ids, ElementsAre("wd1-new", "wd1-old"));
  // Kept by the caller, though no workflow names it.
  purged = store_->PurgeWorkflowDefinitions({"wd1-new", "wd1-old"});
  ASSERT_OUTBOX_OK(purged);
  EXPECT_TRUE(purged->empty());
}

TEST_F(StoreWorkflowTest, NoWorkflowIsNotFound) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  EXPECT_TRUE(absl::IsNotFound(store_->GetWorkflow(id).status()));
}

TEST_F(StoreWorkflowTest, CompletedWorkflowKeepsItsEntryAndLeavesTheQueue) {
  const std::string id = CompletedWorkflow();
  EXPECT_TRUE(DueIds().empty());
  storage::WorkflowState state = testing::StoredWorkflowState(store_.get(), id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPLETED);
  EXPECT_EQ(state.entry().event_id(), id);
}

TEST_F(StoreWorkflowTest, CancelQueuesACompletedWorkflowAgainOnce) {
  const std::string id = CompletedWorkflow();
  Cancel(id, "customer changed their mind");
  Cancel(id, "a second click");
  Reopen();
  EXPECT_THAT(DueIds(), ElementsAre(id));
  absl::StatusOr<WorkflowRecord> record = store_->GetWorkflow(id);
  ASSERT_OUTBOX_OK(record);
  EXPECT_TRUE(record->cancelled);
  EXPECT_EQ(record->cancel_reason, "customer changed their mind");
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 1u);
  // The business change committed with it.
  absl::StatusOr<std::string> sale = store_->Get("sales", "sale-1");
  ASSERT_OUTBOX_OK(sale);
  EXPECT_EQ(*sale, "cancelled");
}

TEST_F(StoreWorkflowTest, CancelBeforeTheLastStepSettlesKeepsTheEvent) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  PendingEvent in_flight = DueWithId(id);
  Cancel(id, "cancelled while billing ran");
  SettleWith(in_flight, Settlement::Kind::kDelivered,
             StateWith(storage::WORKFLOW_PHASE_COMPLETED, 1,
                       absl::ToUnixMillis(clock_.Now())));
  // The agent is told, so that it syncs before the first revert.
  EXPECT_THAT(last_kept_, ElementsAre(id));
  Reopen();
  EXPECT_THAT(DueIds(), ElementsAre(id));
  EXPECT_EQ(testing::StoredWorkflowState(store_.get(), id).finished_unix_ms(),
            0);
}

TEST_F(StoreWorkflowTest, CancelByIdempotencyKeyCancelsThatCommitsEvent) {
  Txn sale;
  sale.Put("sales", "sale-42", "placed");
  const std::string id = sale.Emit(MakeEvent("order.created"));
  sale.SetIdempotencyKey("sale-42");
  ASSERT_OUTBOX_OK(store_->Commit(sale));

  Txn cancel;
  cancel.Put("sales", "sale-42", "cancelled");
  cancel.CancelByIdempotencyKey("sale-42", "customer changed their mind");
  ASSERT_OUTBOX_OK(store_->Commit(cancel));
  Reopen();
  absl::StatusOr<WorkflowRecord> record = store_->GetWorkflow(id);
  ASSERT_OUTBOX_OK(record);
  EXPECT_TRUE(record->cancelled);
  EXPECT_EQ(record->cancel_reason, "customer changed their mind");
}

TEST_F(StoreWorkflowTest, CancelByAKeyNotRememberedFailsAndCommitsNothing) {
  CommitEvent(MakeEvent("order.created"));
  Txn cancel;
  cancel.Put("sales", "sale-1", "cancelled");
  cancel.CancelByIdempotencyKey("sale-1", "r");
  absl::StatusOr<CommitResult> r = store_->Commit(cancel);
  EXPECT_STATUS_CODE(r, absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("cancel by the event id"));
  // The business change did not land without its cancel.
  EXPECT_STATUS_CODE(store_->Get("sales", "sale-1"),
                     absl::StatusCode::kNotFound);
}

TEST_F(StoreWorkflowTest, CancelByTheKeyOfACommitWithoutEventsFails) {
  Txn records_only;
  records_only.Put("sales", "sale-7", "placed");
  records_only.SetIdempotencyKey("sale-7");
  ASSERT_OUTBOX_OK(store_->Commit(records_only));
  Txn cancel;
  cancel.CancelByIdempotencyKey("sale-7", "r");
  absl::StatusOr<CommitResult> r = store_->Commit(cancel);
  EXPECT_STATUS_CODE(r, absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("emitted no event"));
}

TEST_F(StoreWorkflowTest, CancelByAnEmptyKeyIsInvalid) {
  Txn cancel;
  cancel.CancelByIdempotencyKey("", "r");
  EXPECT_STATUS_CODE(store_->Commit(cancel),
                     absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreWorkflowTest, CancelOfAPendingWorkflowOnlyRecordsIt) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  Cancel(id, "r");
  EXPECT_THAT(DueIds(), ElementsAre(id));
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 1u);
}

// The agent plans from the state it wrote while CancelCount stays put: it
// must rise with each cancel written, and only then.
TEST_F(StoreWorkflowTest, CancelCountRisesWithEachCancelWrittenOnly) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  const uint64_t before = store_->CancelCount();
  CommitEvent(MakeEvent("order.created", "till-2"));
  EXPECT_EQ(store_->CancelCount(), before);
  Cancel(id, "changed mind");
  EXPECT_EQ(store_->CancelCount(), before + 1);
  Cancel(id, "a second click");  // the first cancel wins: nothing written
  EXPECT_EQ(store_->CancelCount(), before + 1);
}

// A step's sent mark, with and without a cancel recorded before it.
class StoreWorkflowMarkTest : public StoreWorkflowTest {
 protected:
  // Settles a workflow event with step 0 marked sent; whether the reopened
  // store kept the mark.
  bool MarkKept(bool cancelled_first) {
    const std::string id = CommitEvent(MakeEvent("order.created", "till-1"));
    if (cancelled_first) Cancel(id, "changed mind");
    storage::WorkflowState state;
    state.set_phase(storage::WORKFLOW_PHASE_FORWARD);
    state.add_steps()->set_sent(true);
    Settlement s;
    s.kind = Settlement::Kind::kStepDone;
    s.event = DueWithId(id);
    s.workflow_state = state.SerializeAsString();
    s.workflow_marked_step = 0;
    EXPECT_OUTBOX_OK(store_->Settle({s}));
    EXPECT_OUTBOX_OK(store_->Sync());
    Reopen();
    return testing::StoredWorkflowState(store_.get(), id).steps(0).sent();
  }
};

TEST_F(StoreWorkflowMarkTest, AStepsSentMarkIsStored) {
  EXPECT_TRUE(MarkKept(/*cancelled_first=*/false));
}

// The agent reads the cancel before it would send the step: it never goes
// out, so compensation must not take it for one in doubt.
TEST_F(StoreWorkflowMarkTest, ASentMarkAfterACancelIsDropped) {
  EXPECT_FALSE(MarkKept(/*cancelled_first=*/true));
}

TEST_F(StoreWorkflowTest, CancelWithABadIdIsRefused) {
  Txn txn;
  txn.Cancel("", "r");
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Commit(txn).status()));
  Txn long_id;
  long_id.Cancel(std::string(65, 'x'), "r");
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Commit(long_id).status()));
}

TEST_F(StoreWorkflowTest, ReplayRefusesAWorkflowAndRetryWorkflowResumesIt) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  SettleWith(DueWithId(id), Settlement::Kind::kDeadLetterUnsent,
             StateWith(storage::WORKFLOW_PHASE_NEEDS_ATTENTION, 2,
                       absl::ToUnixMillis(clock_.Now())));
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->Replay(id)));
  EXPECT_EQ(store_->GetStats()->workflows_needing_attention, 1u);
  ASSERT_OUTBOX_OK(store_->RetryWorkflow(
      id, StateWith(storage::WORKFLOW_PHASE_COMPENSATING, 2)));
  Reopen();
  EXPECT_EQ(store_->GetStats()->workflows_needing_attention, 0u);
  EXPECT_THAT(DueIds(), ElementsAre(id));
  EXPECT_EQ(testing::StoredWorkflowState(store_.get(), id).phase(),
            storage::WORKFLOW_PHASE_COMPENSATING);
  // No longer finished: retention leaves it alone.
  clock_.Advance(absl::Hours(1));
  absl::StatusOr<size_t> purged =
      store_->PurgeFinishedWorkflows(absl::ZeroDuration());
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 0u);
}

TEST_F(StoreWorkflowTest, PurgingANeedsAttentionWorkflowUncountsIt) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  SettleWith(DueWithId(id), Settlement::Kind::kDeadLetterUnsent,
             StateWith(storage::WORKFLOW_PHASE_NEEDS_ATTENTION, 1,
                       absl::ToUnixMillis(clock_.Now())));
  Reopen();
  EXPECT_EQ(store_->GetStats()->workflows_needing_attention, 1u);
  clock_.Advance(absl::Minutes(2));
  ASSERT_OUTBOX_OK(store_->PurgeFinishedWorkflows(absl::Minutes(1)));
  Reopen();
  EXPECT_EQ(store_->GetStats()->workflows_needing_attention, 0u);
}

// A wall clock 40 days ahead once made every finished workflow look older
// than its retention: purged, a cancel after the jump compensated nothing.
// Retention compares with the earlier of the wall and the store clocks.
TEST_F(StoreWorkflowTest, AClockSetAheadPurgesNoFinishedWorkflow) {
  const std::string id = CompletedWorkflow();
  clock_.Advance(absl::Minutes(5));
  clock_.Set(clock_.Now() + absl::Hours(24 * 40));
  absl::StatusOr<size_t> purged =
      store_->PurgeFinishedWorkflows(absl::Hours(720));
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 0u);
  // Cancelled after the jump: still there to compensate.
  Cancel(id, "customer changed their mind");
  EXPECT_THAT(DueIds(), ElementsAre(id));
}

// The store clock lags the wall clock by the time the store was closed (a
// till off for a month): a workflow finished after that is kept for its
// retention of the store clock, not a month more (its wall-clock finish
// time against the lagging clock would keep it that long, and after every
// night off a little longer: rows without end).
TEST_F(StoreWorkflowTest, RetentionRunsOnTheStoreClockWhateverItsLag) {
  ASSERT_OUTBOX_OK(store_->Close());
  store_.reset();
  clock_.Set(clock_.Now() + absl::Hours(24 * 30));  // off for a month
  Reopen();
  const std::string id = CompletedWorkflow();
  clock_.Advance(absl::Hours(2));
  absl::StatusOr<size_t> purged =
      store_->PurgeFinishedWorkflows(absl::Hours(1));
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 1u);
  EXPECT_TRUE(absl::IsNotFound(store_->GetWorkflow(id).status()));
}

TEST_F(StoreWorkflowTest, RetentionDeletesOnlyWorkflowsFinishedBeforeCutoff) {
  const std::string old_id = CompletedWorkflow("a");
  clock_.Advance(absl::Hours(2));
  const std::string new_id = CompletedWorkflow("b");
  const std::string running = CommitEvent(MakeEvent("order.created", "c"));
  SettleWith(DueWithId(running), Settlement::Kind::kStepDone,
             StateWith(storage::WORKFLOW_PHASE_FORWARD, 1),
             {ResultRow("reserve", 1)});
  absl::StatusOr<size_t> purged =
      store_->PurgeFinishedWorkflows(absl::Hours(1));
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 1u);
  Reopen();
  EXPECT_TRUE(absl::IsNotFound(store_->GetWorkflow(old_id).status()));
  ASSERT_OUTBOX_OK(store_->GetWorkflow(new_id));
  ASSERT_OUTBOX_OK(store_->GetWorkflow(running));
  absl::StatusOr<std::vector<std::string>> rows =
      store_->ListWorkflowResults(running, 10);
  ASSERT_OUTBOX_OK(rows);
  EXPECT_EQ(rows->size(), 1u);
}

}  // namespace
}  // namespace outbox
