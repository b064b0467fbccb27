// Copyright (c) edge-outbox authors.
//
// Workflows stored as rows (feature workflow_rows): a state settled with
// `rows` is read back as one assembled state (no requests, answers only
// where kept), a state stored whole is replaced by rows in the write that
// first writes them, an answer row is written once, a step done at its
// first attempt leaves the pending entry as it was, and purge, cancel and
// verify handle rows as they handle states.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/keys.h"
#include "proto/storage.pb.h"
#include "tests/testing/raw_store.h"
#include "tests/testing/store_fixture.h"
#include "tests/testing/workflow_state.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeEvent;
using testing::StoredWorkflowState;

// A forward state of two steps: step 0 done with its answer kept, step 1
// marked sent. Both carry a request and an answer, as the agent's state in
// memory may.
storage::WorkflowState TwoSteps(bool rows) {
  storage::WorkflowState state;
  state.set_rows(rows);
  state.set_phase(storage::WORKFLOW_PHASE_FORWARD);
  state.set_next_step(1);
  state.set_next_revert(-1);
  state.set_results(1);
  state.set_definition("def-1");
  storage::WorkflowStepState* reserve = state.add_steps();
  reserve->set_name("reserve");
  reserve->set_status(storage::STEP_STATUS_DONE);
  reserve->set_destination("inventory");
  reserve->set_sent(true);
  reserve->set_request("{\"sku\":1}");
  reserve->set_response("{\"reservation\":\"R-1\"}");
  reserve->set_answer_kept(true);
  reserve->set_http_status(200);
  storage::WorkflowStepState* charge = state.add_steps();
  charge->set_name("charge");
  charge->set_destination("payments");
  charge->set_sent(true);
  charge->set_request("{\"amount\":12}");
  return state;
}

class StoreWorkflowRowsTest : public testing::StoreTest {
 protected:
  void Settle(const PendingEvent& event, Settlement::Kind kind,
              const storage::WorkflowState& state, uint32_t first_result = 0,
              std::vector<std::string> rows = {}) {
    Settlement s;
    s.kind = kind;
    s.event = event;
    s.workflow_state = state.SerializeAsString();
    s.workflow_results = std::move(rows);
    s.first_result = first_result;
    s.workflow_definition_id = state.definition();  // opaque to the store
    s.workflow_definition = "the definition " + state.definition();
    absl::StatusOr<SettleResult> r = store_->Settle({s});
    ASSERT_OUTBOX_OK(r);
    ASSERT_EQ(r->applied, 1u);
    ASSERT_OUTBOX_OK(store_->Sync());
  }

  // The keys of the workflow table, after closing the store.
  std::vector<std::string> WorkflowKeys() {
    if (store_ != nullptr) {
      EXPECT_OUTBOX_OK(store_->Close());
    }
    store_.reset();
    std::vector<std::string> out;
    testing::RawEdit(
        path(), [&](rocksdb::DB* db, const testing::RawFamilies& families) {
          std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(
              rocksdb::ReadOptions(), families.at(keys::kWorkflowFamily)));
          for (it->SeekToFirst(); it->Valid(); it->Next()) {
            out.push_back(it->key().ToString());
          }
        });
    return out;
  }

  // Puts `value` under `key` of the workflow table, the store closed.
  void RawPut(const std::string& key, const std::string& value) {
    if (store_ != nullptr) {
      EXPECT_OUTBOX_OK(store_->Close());
    }
    store_.reset();
    testing::RawEdit(
        path(), [&](rocksdb::DB* db, const testing::RawFamilies& families) {
          rocksdb::WriteOptions wo;
          wo.sync = true;
          ASSERT_TRUE(
              db->Put(wo, families.at(keys::kWorkflowFamily), key, value).ok());
        });
  }

  // The stored pending entry of `seq`, the store closed.
  storage::OutboxEntry StoredEntry(uint64_t seq) {
    if (store_ != nullptr) {
      EXPECT_OUTBOX_OK(store_->Close());
    }
    store_.reset();
    storage::OutboxEntry entry;
    testing::RawEdit(
        path(), [&](rocksdb::DB* db, const testing::RawFamilies& families) {
          std::string value;
          ASSERT_TRUE(db->Get(rocksdb::ReadOptions(),
                              families.at(keys::kPendingFamily), keys::Seq(seq),
                              &value)
                          .ok());
          ASSERT_TRUE(entry.ParseFromString(value));
        });
    return entry;
  }

  std::vector<std::string> Problems() {
    absl::StatusOr<VerifyReport> report = store_->Verify();
    EXPECT_OUTBOX_OK(report);
    return report.ok() ? report->problems : std::vector<std::string>{"?"};
  }
};

TEST_F(StoreWorkflowRowsTest, RowsAreReadBackAsOneStateAfterReopen) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  storage::WorkflowState state = TwoSteps(true);
  state.mutable_steps(1)->set_response("an answer nobody reads");
  Settle(DueWithId(id), Settlement::Kind::kStepDone, state);
  Reopen();
  const storage::WorkflowState stored = StoredWorkflowState(store_.get(), id);
  EXPECT_TRUE(stored.rows());
  EXPECT_EQ(stored.phase(), storage::WORKFLOW_PHASE_FORWARD);
  EXPECT_EQ(stored.next_step(), 1u);
  EXPECT_EQ(stored.next_revert(), -1);
  EXPECT_EQ(stored.results(), 1u);
  EXPECT_EQ(stored.definition(), "def-1");
  ASSERT_EQ(stored.steps_size(), 2);
  EXPECT_EQ(stored.steps(0).name(), "reserve");
  EXPECT_EQ(stored.steps(0).status(), storage::STEP_STATUS_DONE);
  EXPECT_EQ(stored.steps(0).destination(), "inventory");
  EXPECT_EQ(stored.steps(0).http_status(), 200);
  EXPECT_EQ(stored.steps(0).response(), "{\"reservation\":\"R-1\"}");
  EXPECT_EQ(stored.steps(0).request(), "");  // derived from the event again
  EXPECT_EQ(stored.steps(1).name(), "charge");
  EXPECT_TRUE(stored.steps(1).sent());
  EXPECT_EQ(stored.steps(1).response(), "");  // not kept
  EXPECT_EQ(stored.steps(1).request(), "");
  EXPECT_THAT(Problems(), ElementsAre());
}

TEST_F(StoreWorkflowRowsTest, AStateStoredWholeIsReplacedByRowsInOneWrite) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  Settle(DueWithId(id), Settlement::Kind::kStepDone, TwoSteps(false));
  EXPECT_THAT(WorkflowKeys(), ElementsAre("ddef-1", "s" + id));
  Reopen();
  EXPECT_FALSE(StoredWorkflowState(store_.get(), id).rows());
  Settle(DueWithId(id), Settlement::Kind::kStepDone, TwoSteps(true));
  EXPECT_THAT(WorkflowKeys(),
              ElementsAre(keys::WorkflowAnswerKey(id, 0), "ddef-1",
                          keys::WorkflowStepKey(id, 0),
                          keys::WorkflowStepKey(id, 1), "w" + id));
  Reopen();
  EXPECT_TRUE(StoredWorkflowState(store_.get(), id).rows());
  EXPECT_THAT(Problems(), ElementsAre());
}

TEST_F(StoreWorkflowRowsTest, AnAnswerIsWrittenOnce) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  Settle(DueWithId(id), Settlement::Kind::kStepDone, TwoSteps(true));
  storage::StepAnswer marked;
  marked.set_body("as first written");
  RawPut(keys::WorkflowAnswerKey(id, 0), marked.SerializeAsString());
  Reopen();
  // Step 1 is done now; step 0 is still done with its answer in the state.
  storage::WorkflowState next = TwoSteps(true);
  next.mutable_steps(1)->set_status(storage::STEP_STATUS_DONE);
  next.set_next_step(2);
  Settle(DueWithId(id), Settlement::Kind::kStepDone, next);
  Reopen();
  const storage::WorkflowState stored = StoredWorkflowState(store_.get(), id);
  ASSERT_EQ(stored.steps_size(), 2);
  EXPECT_EQ(stored.steps(0).response(), "as first written");
  EXPECT_EQ(stored.steps(1).status(), storage::STEP_STATUS_DONE);
}

TEST_F(StoreWorkflowRowsTest, AStepDoneAtItsFirstTryLeavesThePendingEntry) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  const PendingEvent event = DueWithId(id);
  const storage::OutboxEntry before = StoredEntry(event.seq);
  Reopen();
  clock_.Advance(absl::Minutes(5));
  Settle(DueWithId(id), Settlement::Kind::kStepDone, TwoSteps(true));
  EXPECT_EQ(StoredEntry(event.seq).SerializeAsString(),
            before.SerializeAsString());
  Reopen();
  EXPECT_THAT(DueIds(), ElementsAre(id));  // due at once, after a reopen too
}

TEST_F(StoreWorkflowRowsTest, AStepDoneAfterARetryResetsThePendingEntry) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  Settlement retry;
  retry.kind = Settlement::Kind::kAttempt;
  retry.event = DueWithId(id);
  retry.attempt.error = "HTTP 503";
  retry.attempt.next_attempt = clock_.Now() + absl::Seconds(1);
  ASSERT_OUTBOX_OK(store_->Settle({retry}));
  clock_.Advance(absl::Minutes(5));
  Settle(DueWithId(id), Settlement::Kind::kStepDone, TwoSteps(true));
  const storage::OutboxEntry entry = StoredEntry(retry.event.seq);
  EXPECT_EQ(entry.attempts(), 0u);  // a fresh budget for the next step
  EXPECT_EQ(entry.last_error(), "");
  EXPECT_EQ(entry.next_attempt_unix_ms(), absl::ToUnixMillis(clock_.Now()));
}

TEST_F(StoreWorkflowRowsTest, PurgeDeletesEveryRowOfAFinishedWorkflow) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  storage::WorkflowState done = TwoSteps(true);
  done.mutable_steps(1)->set_status(storage::STEP_STATUS_DONE);
  done.set_phase(storage::WORKFLOW_PHASE_COMPLETED);
  done.set_finished_unix_ms(absl::ToUnixMillis(clock_.Now()));
  storage::StepResult row;
  row.set_step("charge");
  Settle(DueWithId(id), Settlement::Kind::kDelivered, done, 1,
         {row.SerializeAsString()});
  clock_.Advance(absl::Hours(1));
  absl::StatusOr<size_t> purged =
      store_->PurgeFinishedWorkflows(absl::Minutes(1));
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 1u);
  EXPECT_THAT(WorkflowKeys(), ElementsAre("ddef-1"));  // definitions stay
}

TEST_F(StoreWorkflowRowsTest, ACancelQueuesACompletedRowsWorkflowAgain) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  storage::WorkflowState done = TwoSteps(true);
  done.mutable_steps(1)->set_status(storage::STEP_STATUS_DONE);
  done.set_phase(storage::WORKFLOW_PHASE_COMPLETED);
  done.set_finished_unix_ms(absl::ToUnixMillis(clock_.Now()));
  Settle(DueWithId(id), Settlement::Kind::kDelivered, done);
  EXPECT_THAT(DueIds(), ElementsAre());
  Txn txn;
  txn.Put("sales", "sale-1", "cancelled");
  txn.Cancel(id, "customer left");
  ASSERT_OUTBOX_OK(store_->Commit(txn));
  Reopen();
  EXPECT_THAT(DueIds(), ElementsAre(id));  // queued again to be reverted
  // Its entry came from the head row, written with the completion.
  const storage::WorkflowState stored = StoredWorkflowState(store_.get(), id);
  EXPECT_TRUE(stored.rows());
  EXPECT_EQ(stored.phase(), storage::WORKFLOW_PHASE_COMPLETED);
  EXPECT_EQ(stored.entry().event_id(), id);
}

TEST_F(StoreWorkflowRowsTest, VerifyReportsAStepRowWithoutAHead) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  Settle(DueWithId(id), Settlement::Kind::kStepDone, TwoSteps(true));
  storage::WorkflowStep orphan;
  orphan.set_name("lost");
  RawPut(keys::WorkflowStepKey("gone-event", 3), orphan.SerializeAsString());
  Reopen();
  EXPECT_THAT(Problems(),
              ElementsAre(HasSubstr("step row 3 of workflow gone-event has "
                                    "no head row")));
}

TEST_F(StoreWorkflowRowsTest, AHeadThatDoesNotDecodeIsDataLossNamingIt) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  Settle(DueWithId(id), Settlement::Kind::kStepDone, TwoSteps(true));
  RawPut("w" + id, "\xff\xfe not a head");
  Reopen();
  absl::StatusOr<WorkflowRecord> record = store_->GetWorkflow(id);
  EXPECT_EQ(record.status().code(), absl::StatusCode::kDataLoss)
      << record.status();
  EXPECT_THAT(std::string(record.status().message()), HasSubstr(id));
  EXPECT_THAT(Problems(), ::testing::Contains(HasSubstr(id)));
}

}  // namespace
}  // namespace outbox
