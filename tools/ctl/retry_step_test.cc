// Copyright (c) edge-outbox authors.
//
// outboxctl retry-step puts a dead-lettered workflow back in the queue
// resumed at a step, as a reopened store then shows it, and refuses what it
// cannot resume without writing anything.

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/ctl_workflow_fixture.h"
#include "tests/testing/events.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using CtlRetryStepTest = CtlWorkflowTest;

TEST_F(CtlRetryStepTest, ResumesCompensationAtTheStepWhoseRevertFailed) {
  const std::string id = NeedsAttention();
  sink::ExitResult r = Ctl({"retry-step", id, "ship"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "resumed workflow " + id +
                       ": compensation resumes at step 2 (ship)\n");
  EXPECT_TRUE(IsPending(id));
  EXPECT_FALSE(IsDead(id));
  const storage::WorkflowState state = StoredState(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATING);
  EXPECT_EQ(state.next_revert(), 2);
  EXPECT_EQ(state.steps(2).status(), storage::STEP_STATUS_DONE);
  EXPECT_EQ(state.finished_unix_ms(), 0);
  EXPECT_EQ(state.steps(0).status(), storage::STEP_STATUS_DONE);
}

TEST_F(CtlRetryStepTest, StatsCountWorkflowsNeedingAttentionUntilResumed) {
  const std::string id = NeedsAttention();
  EXPECT_THAT(Ctl({"stats"}).out, HasSubstr("needs attention:     1\n"));
  ASSERT_EQ(Ctl({"retry-step", id, "ship"}).exit_code, 0);
  EXPECT_THAT(Ctl({"stats", "--json"}).out,
              HasSubstr("\"workflows_needing_attention\":0"));
}

TEST_F(CtlRetryStepTest, MayResumeCompensationAtAnEarlierStepStillDone) {
  const std::string id = NeedsAttention();
  sink::ExitResult r = Ctl({"retry-step", id, "reserve"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const storage::WorkflowState state = StoredState(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATING);
  EXPECT_EQ(state.next_revert(), 0);
  // Undone by hand, as the operator said by skipping it.
  EXPECT_EQ(state.steps(2).status(), storage::STEP_STATUS_REVERT_FAILED);
}

TEST_F(CtlRetryStepTest, ResumesForwardWhenNothingWasReverted) {
  storage::WorkflowState compensated =
      State(storage::WORKFLOW_PHASE_COMPENSATED,
            {Step("fraud", storage::STEP_STATUS_NO_REVERT),
             Step("reserve", storage::STEP_STATUS_FAILED)});
  compensated.set_cause("reserve: HTTP 500");
  compensated.set_next_revert(-1);
  const std::string id =
      MakeWorkflow(Settlement::Kind::kDeadLetter, compensated);
  sink::ExitResult r = Ctl({"retry-step", id, "reserve"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "resumed workflow " + id +
                       ": the forward steps resume at step 1 (reserve)\n");
  EXPECT_TRUE(IsPending(id));
  const storage::WorkflowState state = StoredState(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_FORWARD);
  EXPECT_EQ(state.next_step(), 1u);
  ASSERT_EQ(state.steps_size(), 1);
  EXPECT_EQ(state.steps(0).status(), storage::STEP_STATUS_DONE);
  EXPECT_EQ(state.cause(), "");
  EXPECT_EQ(state.finished_unix_ms(), 0);
}

TEST_F(CtlRetryStepTest,
       RefusesAWorkflowWhoseStepsWereRevertedAndWritesNothing) {
  const std::string id =
      MakeWorkflow(Settlement::Kind::kDeadLetter,
                   State(storage::WORKFLOW_PHASE_COMPENSATED,
                         {Step("reserve", storage::STEP_STATUS_REVERTED),
                          Step("bill", storage::STEP_STATUS_FAILED)}));
  sink::ExitResult r = Ctl({"retry-step", id, "bill"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: FAILED_PRECONDITION: "));
  EXPECT_THAT(r.err, HasSubstr("commit a new event to run it again"));
  EXPECT_TRUE(IsDead(id));
  EXPECT_EQ(StoredState(id).phase(), storage::WORKFLOW_PHASE_COMPENSATED);
}

TEST_F(CtlRetryStepTest, RefusesAPendingWorkflow) {
  const std::string id =
      MakeWorkflow(Settlement::Kind::kStepDone,
                   State(storage::WORKFLOW_PHASE_FORWARD,
                         {Step("reserve", storage::STEP_STATUS_DONE)}));
  sink::ExitResult r = Ctl({"retry-step", id, "reserve"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: FAILED_PRECONDITION: event " + id +
                                " is pending"));
}

TEST_F(CtlRetryStepTest, RefusesACompletedWorkflow) {
  const std::string id =
      MakeWorkflow(Settlement::Kind::kDelivered,
                   State(storage::WORKFLOW_PHASE_COMPLETED,
                         {Step("reserve", storage::STEP_STATUS_DONE)}));
  sink::ExitResult r = Ctl({"retry-step", id, "reserve"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: FAILED_PRECONDITION: workflow " +
                                id + " completed"));
  EXPECT_THAT(r.err, HasSubstr("commit a new event to run it again"));
}

TEST_F(CtlRetryStepTest, UnknownIdOrStepIsNotFound) {
  sink::ExitResult r = Ctl({"retry-step", "no-such-id", "ship"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              StartsWith("outboxctl: NOT_FOUND: no dead letter with id "));
  const std::string id = NeedsAttention();
  r = Ctl({"retry-step", id, "dance"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: NOT_FOUND: workflow " + id +
                                " has no step named dance (the steps it "
                                "reached: reserve, fraud, ship, bill)"));
  EXPECT_TRUE(IsDead(id));
}

TEST_F(CtlRetryStepTest, APlainDeadLetterIsNotFoundAndPointsAtReplay) {
  const std::string id = MakeDeadLetter(absl::Now());
  sink::ExitResult r = Ctl({"retry-step", id, "ship"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: NOT_FOUND: dead letter " + id +
                                " has no workflow stored"));
  EXPECT_THAT(r.err, HasSubstr("outboxctl replay"));
}

// A workflow stored as rows is resumed as rows: the steps that run again
// lose their rows, the others keep theirs and their kept answers.
TEST_F(CtlRetryStepTest, ResumesAWorkflowStoredAsRowsAsRows) {
  storage::WorkflowState compensated =
      State(storage::WORKFLOW_PHASE_COMPENSATED,
            {Step("fraud", storage::STEP_STATUS_NO_REVERT),
             Step("reserve", storage::STEP_STATUS_FAILED)});
  compensated.set_rows(true);
  compensated.mutable_steps(0)->set_answer_kept(true);
  compensated.mutable_steps(0)->set_response("{\"case\":7}");
  compensated.set_cause("reserve: HTTP 500");
  compensated.set_next_revert(-1);
  const std::string id =
      MakeWorkflow(Settlement::Kind::kDeadLetter, compensated);
  sink::ExitResult r = Ctl({"retry-step", id, "reserve"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const storage::WorkflowState state = StoredState(id);
  EXPECT_TRUE(state.rows());
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_FORWARD);
  EXPECT_EQ(state.next_step(), 1u);
  ASSERT_EQ(state.steps_size(), 1);
  EXPECT_EQ(state.steps(0).status(), storage::STEP_STATUS_DONE);
  EXPECT_EQ(state.steps(0).response(), "{\"case\":7}");
  EXPECT_EQ(Ctl({"verify"}).exit_code, 0);
}

}  // namespace
}  // namespace outbox::ctl
