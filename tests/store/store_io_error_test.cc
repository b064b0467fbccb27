// Copyright (c) edge-outbox authors.
//
// Failed writes: an I/O error or a full disk during Commit leaves neither
// the record nor the event after a reopen, and the store refuses further
// writes until it is reopened (the outcome of a failed log write is only
// settled by recovery), then works again.

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "lib/store_impl.h"
#include "proto/storage.pb.h"
#include "tests/fault_fs/crash_test_env.h"
#include "tests/fault_fs/fault_injection_fs.h"
#include "tests/testing/events.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using testing::MakeEvent;

class StoreIoErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = std::make_shared<testing::FaultInjectionFileSystem>();
    env_ = testing::NewCrashTestEnv(fs_);
    options_.tables = {"sales"};
    Reopen();
  }

  void Reopen() {
    if (store_ != nullptr) store_->Close().IgnoreError();
    store_.reset();
    auto store = OpenStoreWithEnv(options_, dir_.Sub("db"), env_.get());
    ASSERT_OUTBOX_OK(store);
    store_ = std::move(*store);
  }

  // Reopens the store on `clock`, commits "sale-1", moves the clock 5
  // minutes (so that Close keeps the store clock with a write of its own),
  // makes every log write fail with `error`, and returns what Close says.
  absl::Status CloseWithFailingLog(testing::FakeClock* clock,
                                   testing::ErrorInjection::Error error) {
    options_.clock = clock;
    Reopen();
    EXPECT_OUTBOX_OK(CommitSale("sale-1"));
    clock->Advance(absl::Minutes(5));
    testing::ErrorInjection failing;
    failing.error = error;
    failing.file_kinds = testing::kWalFile;
    fs_->InjectErrors(failing);
    const absl::Status closed = store_->Close();
    fs_->ClearErrors();
    return closed;
  }

  // After a power cut and a reopen, "sale-1" is there and its event pending.
  void ExpectTheSaleAfterAPowerCut() {
    store_.reset();
    ASSERT_OUTBOX_OK(fs_->SimulatePowerCut());
    Reopen();
    EXPECT_OUTBOX_OK(store_->Get("sales", "sale-1"));
    EXPECT_EQ(store_->GetStats()->pending_events, 1u);
    ASSERT_OUTBOX_OK(store_->Close());
  }

  // Commits "order-1" and takes its event, as the agent's NextDue would.
  void CommitAndTakeOrder(PendingEvent* order) {
    ASSERT_OUTBOX_OK(CommitSale("order-1"));
    auto due = store_->NextDue(1);
    ASSERT_OUTBOX_OK(due);
    ASSERT_EQ(due->events.size(), 1u);
    *order = due->events[0];
  }

  absl::StatusOr<CommitResult> CommitSale(const std::string& sale) {
    Txn txn;
    txn.Put("sales", sale, "12.50");
    txn.Emit(MakeEvent("sale.created"));
    return store_->Commit(txn);
  }

  // Settles `st` while every log write fails: kUnavailable, the store
  // refuses writes until reopened.
  void ExpectSettleFailsInTheLog(const Settlement& st) {
    testing::ErrorInjection eio;
    eio.error = testing::ErrorInjection::Error::kIOError;
    eio.file_kinds = testing::kWalFile;
    fs_->InjectErrors(eio);
    EXPECT_STATUS_CODE(store_->Settle({st}), absl::StatusCode::kUnavailable);
    fs_->ClearErrors();
  }

  void ExpectNeither(const std::string& sale) {
    EXPECT_STATUS_CODE(store_->Get("sales", sale), absl::StatusCode::kNotFound);
    auto stats = store_->GetStats();
    ASSERT_OUTBOX_OK(stats);
    EXPECT_EQ(stats->pending_events, 0u);
  }

  testing::TempDir dir_;
  std::shared_ptr<testing::FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  Options options_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreIoErrorTest, FailedLogWriteLeavesNeitherAfterReopen) {
  testing::ErrorInjection eio;
  eio.error = testing::ErrorInjection::Error::kIOError;
  eio.file_kinds = testing::kWalFile;
  fs_->InjectErrors(eio);
  // kUnavailable, as the README and Store::Commit promise: the caller may
  // retry (after a reopen), and the write may or may not be there.
  EXPECT_STATUS_CODE(CommitSale("sale-1"), absl::StatusCode::kUnavailable);
  fs_->ClearErrors();

  // Until reopened, the store refuses writes instead of stacking new ones
  // on a log whose last record is in an unknown state.
  auto refused = CommitSale("sale-2");
  EXPECT_STATUS_CODE(refused, absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("reopen"), absl::string_view::npos);

  Reopen();
  ExpectNeither("sale-1");
  ASSERT_OUTBOX_OK(CommitSale("sale-3"));
  Reopen();
  EXPECT_OUTBOX_OK(store_->Get("sales", "sale-3"));
  EXPECT_EQ(store_->GetStats()->pending_events, 1u);
}

TEST_F(StoreIoErrorTest, FailedFsyncLeavesNeitherAfterPowerCut) {
  testing::ErrorInjection sync_fails;
  sync_fails.error = testing::ErrorInjection::Error::kIOError;
  sync_fails.writes = false;
  sync_fails.syncs = true;
  sync_fails.file_kinds = testing::kWalFile;
  fs_->InjectErrors(sync_fails);
  EXPECT_STATUS_CODE(CommitSale("sale-1"), absl::StatusCode::kUnavailable);
  EXPECT_STATUS_CODE(CommitSale("sale-2"),
                     absl::StatusCode::kFailedPrecondition);
  fs_->ClearErrors();
  store_->Close().IgnoreError();
  store_.reset();
  ASSERT_OUTBOX_OK(fs_->SimulatePowerCut());
  Reopen();
  ExpectNeither("sale-1");
}

// A close keeps the store clock with one last synced write when it moved a
// minute or more: if that write fails, Close says so, as for a failed sync
// (the log is then left as it is, as after any failed write), and a reopen
// after a power cut finds every write acknowledged before it.
TEST_F(StoreIoErrorTest, AFailedCloseWriteIsReportedAndLosesNothing) {
  testing::FakeClock clock;
  EXPECT_STATUS_CODE(
      CloseWithFailingLog(&clock, testing::ErrorInjection::Error::kIOError),
      absl::StatusCode::kUnavailable);
  ExpectTheSaleAfterAPowerCut();
  store_.reset();  // before `clock`, which it reads
}

// The same on a full disk.
TEST_F(StoreIoErrorTest, AFullDiskAtTheCloseWriteIsReportedAndLosesNothing) {
  testing::FakeClock clock;
  EXPECT_FALSE(
      CloseWithFailingLog(&clock, testing::ErrorInjection::Error::kNoSpace)
          .ok());
  ExpectTheSaleAfterAPowerCut();
  store_.reset();  // before `clock`, which it reads
}

TEST_F(StoreIoErrorTest, DiskFullIsResourceExhaustedAndNothingHalfWritten) {
  ASSERT_OUTBOX_OK(CommitSale("sale-1"));
  testing::ErrorInjection full;
  full.error = testing::ErrorInjection::Error::kNoSpace;
  full.file_kinds = testing::kWalFile;
  fs_->InjectErrors(full);
  EXPECT_STATUS_CODE(CommitSale("sale-2"),
                     absl::StatusCode::kResourceExhausted);
  fs_->ClearErrors();  // space returns
  Reopen();
  EXPECT_OUTBOX_OK(store_->Get("sales", "sale-1"));
  EXPECT_STATUS_CODE(store_->Get("sales", "sale-2"),
                     absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetStats()->pending_events, 1u);
  ASSERT_OUTBOX_OK(CommitSale("sale-3"));
}

TEST_F(StoreIoErrorTest, DiskFullRecoversWithoutReopenWhenSpaceReturns) {
  ASSERT_OUTBOX_OK(CommitSale("sale-1"));
  testing::ErrorInjection full;
  full.error = testing::ErrorInjection::Error::kNoSpace;
  fs_->InjectErrors(full);  // every file: RocksDB cannot even reopen
  EXPECT_STATUS_CODE(CommitSale("sale-2"),
                     absl::StatusCode::kResourceExhausted);
  auto still_full = CommitSale("sale-3");
  EXPECT_STATUS_CODE(still_full, absl::StatusCode::kResourceExhausted);
  EXPECT_NE(still_full.status().message().find("still full"),
            absl::string_view::npos)
      << still_full.status();
  EXPECT_OUTBOX_OK(store_->Get("sales", "sale-1"));  // reads keep working

  fs_->ClearErrors();  // space returns; no reopen by the caller
  ASSERT_OUTBOX_OK(CommitSale("sale-4"));
  EXPECT_EQ(store_->GetStats()->pending_events, 2u);

  // And what it acknowledged survives a power cut.
  store_->Close().IgnoreError();
  store_.reset();
  ASSERT_OUTBOX_OK(fs_->SimulatePowerCut());
  Reopen();
  EXPECT_OUTBOX_OK(store_->Get("sales", "sale-1"));
  EXPECT_OUTBOX_OK(store_->Get("sales", "sale-4"));
  EXPECT_STATUS_CODE(store_->Get("sales", "sale-2"),
                     absl::StatusCode::kNotFound);
  EXPECT_STATUS_CODE(store_->Get("sales", "sale-3"),
                     absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetStats()->pending_events, 2u);
}

// The workflows feature rides in the batch that first writes a workflow
// row: when that write fails, a reopen shows neither, and the retried write
// records both.
TEST_F(StoreIoErrorTest, FailedFirstWorkflowWriteRecordsNoFeature) {
  PendingEvent order;
  ASSERT_NO_FATAL_FAILURE(CommitAndTakeOrder(&order));
  storage::WorkflowState state;
  state.set_phase(storage::WORKFLOW_PHASE_FORWARD);
  state.set_next_step(1);
  Settlement step;
  step.kind = Settlement::Kind::kStepDone;
  step.event = order;
  step.workflow_state = state.SerializeAsString();
  ExpectSettleFailsInTheLog(step);

  Reopen();
  EXPECT_STATUS_CODE(store_->GetWorkflow(step.event.id),
                     absl::StatusCode::kNotFound);
  auto report = store_->Verify();
  ASSERT_OUTBOX_OK(report);
  EXPECT_TRUE(report->features.empty());
  EXPECT_TRUE(report->problems.empty());

  auto settled = store_->Settle({step});
  ASSERT_OUTBOX_OK(settled);
  ASSERT_EQ(settled->applied, 1u);
  ASSERT_OUTBOX_OK(store_->Sync());
  Reopen();
  EXPECT_OUTBOX_OK(store_->GetWorkflow(step.event.id));
  report = store_->Verify();
  ASSERT_OUTBOX_OK(report);
  ASSERT_EQ(report->features.size(), 1u);
  EXPECT_EQ(report->features[0].rfind("incompat:workflows (", 0), 0u)
      << report->features[0];
}

// A state stored whole becomes rows in one batch, with the feature
// workflow_rows: when that write fails, a reopen shows the state as it was
// and no feature; the retried write converts it and records the feature.
TEST_F(StoreIoErrorTest, FailedFirstRowsWriteKeepsTheStateStoredWhole) {
  PendingEvent order;
  ASSERT_NO_FATAL_FAILURE(CommitAndTakeOrder(&order));
  storage::WorkflowState state;
  state.set_phase(storage::WORKFLOW_PHASE_FORWARD);
  storage::WorkflowStepState* step0 = state.add_steps();
  step0->set_name("reserve");
  step0->set_sent(true);
  step0->set_request("{\"sku\":1}");
  Settlement mark;
  mark.kind = Settlement::Kind::kStepDone;
  mark.event = order;
  mark.workflow_state = state.SerializeAsString();
  ASSERT_OUTBOX_OK(store_->Settle({mark}));
  ASSERT_OUTBOX_OK(store_->Sync());
  state.set_rows(true);
  step0->set_status(storage::STEP_STATUS_DONE);
  state.set_next_step(1);
  Settlement done = mark;
  done.workflow_state = state.SerializeAsString();
  ExpectSettleFailsInTheLog(done);

  Reopen();
  auto stored = store_->GetWorkflow(mark.event.id);
  ASSERT_OUTBOX_OK(stored);
  storage::WorkflowState read;
  ASSERT_TRUE(read.ParseFromString(stored->state));
  EXPECT_FALSE(read.rows());
  EXPECT_EQ(read.steps(0).request(), "{\"sku\":1}");
  EXPECT_EQ(read.steps(0).status(), storage::STEP_STATUS_UNSPECIFIED);
  auto report = store_->Verify();
  ASSERT_OUTBOX_OK(report);
  EXPECT_TRUE(report->problems.empty());
  ASSERT_EQ(report->features.size(), 1u);
  EXPECT_EQ(report->features[0].rfind("incompat:workflows (", 0), 0u);

  auto settled = store_->Settle({done});
  ASSERT_OUTBOX_OK(settled);
  ASSERT_EQ(settled->applied, 1u);
  ASSERT_OUTBOX_OK(store_->Sync());
  Reopen();
  stored = store_->GetWorkflow(mark.event.id);
  ASSERT_OUTBOX_OK(stored);
  ASSERT_TRUE(read.ParseFromString(stored->state));
  EXPECT_TRUE(read.rows());
  EXPECT_EQ(read.steps(0).status(), storage::STEP_STATUS_DONE);
  report = store_->Verify();
  ASSERT_OUTBOX_OK(report);
  EXPECT_TRUE(report->problems.empty());
  ASSERT_EQ(report->features.size(), 2u);
  EXPECT_EQ(report->features[1].rfind("incompat:workflow_rows (", 0), 0u);
}

}  // namespace
}  // namespace outbox
