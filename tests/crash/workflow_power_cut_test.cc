// Copyright (c) edge-outbox authors.
//
// Workflows across a power cut (issue 13's acceptance), deterministic, each
// case with workflows stored whole and as rows (the parameter): a store
// over the fault-injecting file system, an agent sending to an
// in-process receiver that answers as scripted, and the power cut at a
// named crash point (lib/crash_points.h). After the reopen a new agent goes
// on, and the receiver's log says what was sent again:
//   - cut once step b's result is synced (before step c leaves): the
//     workflow resumes at c; a and b are not sent again;
//   - cut once b's answer is written but not synced: b goes out once more,
//     under its own id (a receiver deduplicates it), then c;
//   - cut in the middle of compensation, once the first revert's result is
//     synced: that revert is not sent again, the others follow last first;
//   - cut once b's 2xx is in but before its result is written, then a
//     cancel: b is in doubt (only its sent mark says it went out), so it is
//     resent under its own id and reverted before a;
//   - cut before the first step's sent mark is synced: nothing went out;
//   - cut once the last step's result and the completion (one write, a
//     delivery: not synced at once) are written: the last step goes out
//     once more under its id, and the workflow completes once;
//   - a cancel while the last step is in flight keeps that write's event
//     for compensation: it is synced before the first revert (the cut at
//     that sync resends the last step, in doubt, then reverts).

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/config/workflow_rows.h"
#include "agent/expr/step_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/crash_points.h"
#include "lib/store_impl.h"
#include "outbox/agent.h"
#include "proto/storage.pb.h"
#include "tests/crash/power_cut_soak.h"
#include "tests/fault_fs/crash_test_env.h"
#include "tests/fault_fs/fault_injection_fs.h"
#include "tests/testing/events.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/recording_transport.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {
namespace {

using ::testing::ElementsAre;

constexpr char kType[] = "order.created";
constexpr absl::Duration kRound = absl::Milliseconds(1200);
constexpr int kRounds = 20;

// Steps a, b and c have a revert naming their answer's ref; d has none.
std::string Config() {
  std::string config;
  for (const char* step : {"a", "b", "c", "d"}) {
    absl::StrAppend(&config, "destinations { name: \"", step,
                    "\" url: \"http://receiver.test/", step, "\" }\n");
  }
  absl::StrAppend(&config, R"(
    retry { base_delay: "100ms" max_delay: "1s" max_attempts: 4 }
    agent { probe_interval_min: "100ms" probe_interval_max: "1s" }
    workflows { event_type: ")",
                  kType, "\"\n");
  for (const char* step : {"a", "b", "c"}) {
    absl::StrAppend(&config, "  steps { name: \"", step, "\" destination: \"",
                    step, "\" revert { url: \"http://receiver.test/", step,
                    "/{{response:", step, ":/ref}}/undo\" } }\n");
  }
  absl::StrAppend(&config, "  steps { name: \"d\" destination: \"d\" }\n}\n");
  return config;
}

// The parameter: workflows written as rows (feature workflow_rows, the
// next release's writer: agent/config/workflow_rows.h) or as states stored
// whole.
class WorkflowPowerCutTest : public ::testing::TestWithParam<bool> {
 protected:
  WorkflowPowerCutTest()
      : fs_(std::make_shared<FaultInjectionFileSystem>()),
        env_(NewCrashTestEnv(fs_)),
        // Every answer not scripted is a 2xx.
        receiver_(/*seed=*/1, AnswerWeights{100, 0, 0, 0, 0, 0}) {}

  void SetUp() override {
    workflow::TEST_SetWriteRows(GetParam());
    options_.tables = {"sales"};
    options_.clock = &clock_;
    ASSERT_NO_FATAL_FAILURE(Open());
  }

  void TearDown() override {
    workflow::TEST_SetWriteRows(std::nullopt);
    internal::TEST_SetCrashHook(nullptr);
    agent_.reset();
    if (store_ != nullptr) store_->Close().IgnoreError();
  }

  void Open() {
    auto store = OpenStoreWithEnv(options_, dir_.Sub("db"), env_.get());
    ASSERT_OUTBOX_OK(store);
    store_ = std::move(*store);
    // Without power nothing leaves the device.
    auto agent = Agent::Create(
        store_.get(),
        PoweredAgentOptions(Config(), &receiver_, fs_.get(), &clock_));
    ASSERT_OUTBOX_OK(agent);
    agent_ = std::move(*agent);
  }

  std::string CommitOrder() {
    Txn txn;
    const std::string id = txn.Emit(MakeEvent(kType));
    txn.Put("sales", "sale-1", "placed");
    EXPECT_OUTBOX_OK(store_->Commit(txn));
    return id;
  }

  // Cuts the power at the `passage`-th passage of `point`.
  void CutAt(const char* point, int passage) {
    internal::TEST_SetCrashHook([this, point, passage](absl::string_view p) {
      if (p == point && ++passed_ == passage) fs_->Kill();
    });
  }

  // Agent rounds (each moves the clock past every wait) until the power
  // goes; then the disk is left as a power cut leaves it, and the store and
  // a new agent start again.
  void RunUntilThePowerGoesAndRestart() {
    for (int i = 0; i < kRounds && !fs_->IsDead(); ++i) {
      clock_.Advance(kRound);
      agent_->RunOnce().IgnoreError();  // fails once the power is gone
    }
    ASSERT_TRUE(fs_->IsDead()) << "the planned cut was not reached";
    internal::TEST_SetCrashHook(nullptr);
    agent_.reset();
    store_->Close().IgnoreError();
    store_.reset();
    ASSERT_OUTBOX_OK(fs_->SimulatePowerCut());
    fs_->Revive();
    ASSERT_NO_FATAL_FAILURE(Open());
  }

  // Agent rounds until nothing is pending.
  void RunToTheEnd() {
    for (int i = 0; i < kRounds; ++i) {
      clock_.Advance(kRound);
      ASSERT_OUTBOX_OK(agent_->RunOnce());
      absl::StatusOr<Stats> stats = store_->GetStats();
      ASSERT_OUTBOX_OK(stats);
      if (stats->pending_events == 0) return;
    }
    FAIL() << "the workflow did not finish in " << kRounds << " rounds";
  }

  std::vector<std::string> Received() const {
    std::vector<std::string> ids;
    for (const ReceivedRequest& r : receiver_.log()) {
      ids.push_back(r.webhook_id);
    }
    return ids;
  }

  storage::WorkflowState Stored(const std::string& id) {
    storage::WorkflowState state;
    absl::StatusOr<WorkflowRecord> record = store_->GetWorkflow(id);
    EXPECT_OUTBOX_OK(record);
    if (record.ok()) {
      EXPECT_TRUE(state.ParseFromString(record->state));
    }
    return state;
  }

  TempDir dir_;
  std::shared_ptr<FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  FakeClock clock_;
  Options options_;
  Receiver receiver_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Agent> agent_;
  std::atomic<int> passed_{0};
};

std::string Step(const std::string& id, const char* step) {
  return workflow::StepRequestId(id, step, /*revert=*/false);
}
std::string Revert(const std::string& id, const char* step) {
  return workflow::StepRequestId(id, step, /*revert=*/true);
}
// Steps a to d, each once, in order.
std::vector<std::string> FourSteps(const std::string& id) {
  return {Step(id, "a"), Step(id, "b"), Step(id, "c"), Step(id, "d")};
}

TEST_P(WorkflowPowerCutTest, CutAfterStepTwoIsSyncedResumesAtStepThree) {
  const std::string id = CommitOrder();
  // Step c is about to leave: a's and b's results are synced.
  CutAt(internal::kWorkflowStepBeforeSend, 3);
  ASSERT_NO_FATAL_FAILURE(RunUntilThePowerGoesAndRestart());
  EXPECT_THAT(Received(), ElementsAre(Step(id, "a"), Step(id, "b")));

  ASSERT_NO_FATAL_FAILURE(RunToTheEnd());
  EXPECT_EQ(Received(), FourSteps(id));
  EXPECT_EQ(Stored(id).phase(), storage::WORKFLOW_PHASE_COMPLETED);
}

TEST_P(WorkflowPowerCutTest, CutBeforeStepTwosResultIsSyncedResendsItsId) {
  const std::string id = CommitOrder();
  // b's answer is written, not synced: the cut takes it.
  CutAt(internal::kWorkflowStepBeforeSync, 2);
  ASSERT_NO_FATAL_FAILURE(RunUntilThePowerGoesAndRestart());
  EXPECT_THAT(Received(), ElementsAre(Step(id, "a"), Step(id, "b")));

  ASSERT_NO_FATAL_FAILURE(RunToTheEnd());
  // b once more, under its own id (the receiver deduplicates it); a not.
  EXPECT_THAT(Received(),
              ElementsAre(Step(id, "a"), Step(id, "b"), Step(id, "b"),
                          Step(id, "c"), Step(id, "d")));
  EXPECT_EQ(Stored(id).phase(), storage::WORKFLOW_PHASE_COMPLETED);
}

TEST_P(WorkflowPowerCutTest, CutInCompensationRevertsTheRestLastFirst) {
  receiver_.Script({Answer::kOk, Answer::kOk, Answer::kOk,
                    Answer::kBadRequest});  // d fails for good
  const std::string id = CommitOrder();
  // c's revert answered, written and synced; b's about to leave.
  CutAt(internal::kWorkflowRevertBeforeSend, 2);
  ASSERT_NO_FATAL_FAILURE(RunUntilThePowerGoesAndRestart());
  EXPECT_THAT(Received(),
              ElementsAre(Step(id, "a"), Step(id, "b"), Step(id, "c"),
                          Step(id, "d"), Revert(id, "c")));

  ASSERT_NO_FATAL_FAILURE(RunToTheEnd());
  EXPECT_THAT(
      Received(),
      ElementsAre(Step(id, "a"), Step(id, "b"), Step(id, "c"), Step(id, "d"),
                  Revert(id, "c"), Revert(id, "b"), Revert(id, "a")));
  // Each revert undoes its step's own answer (arrivals 0, 1 and 2).
  const std::vector<ReceivedRequest>& log = receiver_.log();
  ASSERT_EQ(log.size(), 7u);
  EXPECT_EQ(log[4].url, "http://receiver.test/c/a2/undo");
  EXPECT_EQ(log[5].url, "http://receiver.test/b/a1/undo");
  EXPECT_EQ(log[6].url, "http://receiver.test/a/a0/undo");
  const storage::WorkflowState state = Stored(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  ASSERT_EQ(state.steps_size(), 4);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(state.steps(k).status(), storage::STEP_STATUS_REVERTED) << k;
  }
  EXPECT_EQ(state.steps(3).status(), storage::STEP_STATUS_FAILED);
  EXPECT_OUTBOX_OK(store_->FindDeadLetter(id));  // compensated: given up
}

TEST_P(WorkflowPowerCutTest,
       CutBeforeStepTwosResultThenACancelResendsAndRevertsIt) {
  const std::string id = CommitOrder();
  // b's 2xx is in, its result not written: nothing but b's mark says it
  // went out.
  CutAt(internal::kWorkflowStepAfterAnswer, 2);
  ASSERT_NO_FATAL_FAILURE(RunUntilThePowerGoesAndRestart());
  EXPECT_THAT(Received(), ElementsAre(Step(id, "a"), Step(id, "b")));
  Txn cancel;
  cancel.Put("sales", "sale-1", "cancelled");
  cancel.Cancel(id, "customer cancelled");
  ASSERT_OUTBOX_OK(store_->Commit(cancel));

  ASSERT_NO_FATAL_FAILURE(RunToTheEnd());
  // b once more under its id, to learn it happened; then undone, last first.
  EXPECT_THAT(Received(),
              ElementsAre(Step(id, "a"), Step(id, "b"), Step(id, "b"),
                          Revert(id, "b"), Revert(id, "a")));
  const std::vector<ReceivedRequest>& log = receiver_.log();
  ASSERT_EQ(log.size(), 5u);
  EXPECT_EQ(log[3].url, "http://receiver.test/b/a2/undo");  // the resend's
  const storage::WorkflowState state = Stored(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_EQ(state.steps(1).status(), storage::STEP_STATUS_REVERTED);
  EXPECT_EQ(state.steps(0).status(), storage::STEP_STATUS_REVERTED);
}

TEST_P(WorkflowPowerCutTest, CutBeforeTheFirstMarkIsSyncedSendsNothing) {
  const std::string id = CommitOrder();
  CutAt(internal::kWorkflowMarkBeforeSync, 1);
  ASSERT_NO_FATAL_FAILURE(RunUntilThePowerGoesAndRestart());
  EXPECT_TRUE(Received().empty());
  ASSERT_NO_FATAL_FAILURE(RunToTheEnd());
  EXPECT_EQ(Received(), FourSteps(id));
}

TEST_P(WorkflowPowerCutTest, CutBeforeTheCompletionIsSyncedResendsTheLastStep) {
  const std::string id = CommitOrder();
  // d's result and the completion are one write, synced with the
  // acknowledgements: the cut takes both.
  CutAt(internal::kWorkflowCompletedWritten, 1);
  ASSERT_NO_FATAL_FAILURE(RunUntilThePowerGoesAndRestart());
  EXPECT_EQ(Received(), FourSteps(id));

  ASSERT_NO_FATAL_FAILURE(RunToTheEnd());
  // d once more under its own id; it completes once.
  EXPECT_THAT(Received(),
              ElementsAre(Step(id, "a"), Step(id, "b"), Step(id, "c"),
                          Step(id, "d"), Step(id, "d")));
  EXPECT_EQ(Stored(id).phase(), storage::WORKFLOW_PHASE_COMPLETED);
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->delivered_total, 1u);
  EXPECT_EQ(stats->dead_letters, 0u);
}

TEST_P(WorkflowPowerCutTest,
       ACancelThatKeptTheCompletionIsSyncedBeforeTheFirstRevert) {
  const std::string id = CommitOrder();
  // The cancel lands while d is in flight; the store keeps d's completion
  // pending for compensation, and that write must be synced before c's
  // revert leaves: the cut comes at that sync (the fourth step sync).
  int sends = 0;
  int syncs = 0;
  internal::TEST_SetCrashHook([&](absl::string_view p) {
    if (p == internal::kWorkflowStepBeforeSend && ++sends == 4) {
      Txn cancel;
      cancel.Put("sales", "sale-1", "cancelled");
      cancel.Cancel(id, "customer cancelled");
      EXPECT_OUTBOX_OK(store_->Commit(cancel));
    }
    if (p == internal::kWorkflowStepBeforeSync && ++syncs == 4) fs_->Kill();
  });
  ASSERT_NO_FATAL_FAILURE(RunUntilThePowerGoesAndRestart());
  EXPECT_EQ(Received(), FourSteps(id));

  ASSERT_NO_FATAL_FAILURE(RunToTheEnd());
  // d's result was lost with the cut: in doubt, it is resent under its id,
  // then the steps are undone last first.
  EXPECT_THAT(Received(),
              ElementsAre(Step(id, "a"), Step(id, "b"), Step(id, "c"),
                          Step(id, "d"), Step(id, "d"), Revert(id, "c"),
                          Revert(id, "b"), Revert(id, "a")));
  EXPECT_EQ(Stored(id).phase(), storage::WORKFLOW_PHASE_COMPENSATED);
}

INSTANTIATE_TEST_SUITE_P(Writers, WorkflowPowerCutTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "Rows" : "States");
                         });

}  // namespace
}  // namespace outbox::testing
