// Copyright (c) edge-outbox authors.
//
// outboxctl cancel commits Txn::Cancel for a workflow this store knows, as a
// reopened store then shows it; the first cancel wins.

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/ctl_workflow_fixture.h"
#include "tests/testing/events.h"
#include "tests/testing/status.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using CtlCancelTest = CtlWorkflowTest;

WorkflowRecord StoredRecord(Store* store, const std::string& id) {
  absl::StatusOr<WorkflowRecord> record = store->GetWorkflow(id);
  EXPECT_OUTBOX_OK(record);
  return record.ok() ? *record : WorkflowRecord();
}

TEST_F(CtlCancelTest, CancelOfAPendingWorkflowRecordsTheReason) {
  const std::string id = Commit(testing::MakeEvent("order.created"));
  sink::ExitResult r = Ctl({"cancel", id, "--reason", "customer called"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("cancelled " + id +
                                ": the agent starts no "
                                "further step"));
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const WorkflowRecord record = StoredRecord(store.get(), id);
  EXPECT_TRUE(record.cancelled);
  EXPECT_EQ(record.cancel_reason, "customer called");
  EXPECT_OUTBOX_OK(store->FindPending(id));
  ASSERT_OUTBOX_OK(store->Close());
  EXPECT_THAT(Ctl({"show", id}).out, HasSubstr("reason \"customer called\"\n"));
}

TEST_F(CtlCancelTest, CancellingTwiceChangesNothingAndSaysSo) {
  const std::string id = Commit(testing::MakeEvent("order.created"));
  ASSERT_EQ(Ctl({"cancel", id, "--reason", "first"}).exit_code, 0);
  sink::ExitResult r = Ctl({"cancel", id, "--reason", "second"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith(id + " was already cancelled at "));
  EXPECT_THAT(r.out, HasSubstr("(reason first): nothing changed\n"));
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(StoredRecord(store.get(), id).cancel_reason, "first");
  EXPECT_OUTBOX_OK(store->Close());
}

TEST_F(CtlCancelTest, CancelOfAnUnknownIdIsNotFoundAndRecordsNothing) {
  const std::string id = "0190aaaa-0000-7000-8000-000000000000";
  sink::ExitResult r = Ctl({"cancel", id});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: NOT_FOUND: no pending event or "
                                "stored workflow with id " +
                                id + ": nothing to cancel"));
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_STATUS_CODE(store->GetWorkflow(id), absl::StatusCode::kNotFound);
  EXPECT_OUTBOX_OK(store->Close());
}

TEST_F(CtlCancelTest, CancelOfACompletedWorkflowQueuesItAgain) {
  const std::string id =
      MakeWorkflow(Settlement::Kind::kDelivered,
                   State(storage::WORKFLOW_PHASE_COMPLETED,
                         {Step("reserve", storage::STEP_STATUS_DONE)}));
  ASSERT_FALSE(IsPending(id));
  sink::ExitResult r = Ctl({"cancel", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("had completed and is queued again"));
  EXPECT_TRUE(IsPending(id));
}

TEST_F(CtlCancelTest, CancelByKeyCancelsTheEventsCommittedWithIt) {
  Txn sale;
  const std::string id = sale.Emit(testing::MakeEvent("order.created"));
  sale.SetIdempotencyKey("sale-42");
  {
    std::unique_ptr<Store> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_OUTBOX_OK(store->Commit(sale));
    ASSERT_OUTBOX_OK(store->Close());
  }
  sink::ExitResult r = Ctl({"cancel", "--key", "sale-42"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("idempotency key sale-42"));
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(StoredRecord(store.get(), id).cancelled);
  EXPECT_OUTBOX_OK(store->Close());
}

TEST_F(CtlCancelTest, CancelByAnUnknownKeyIsNotFound) {
  sink::ExitResult r = Ctl({"cancel", "--key", "sale-404"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND: Txn::CancelByIdempotencyKey: no "
                               "commit with the idempotency key"));
}

TEST_F(CtlCancelTest, CancelWithBothAnIdAndAKeyIsAUsageError) {
  EXPECT_EQ(Ctl({"cancel", "some-id", "--key", "sale-1"}).exit_code, 2);
}

}  // namespace
}  // namespace outbox::ctl
