// Copyright (c) edge-outbox authors.
//
// PlanRetryStep's refusals, each decided from the stored state alone (the
// command's tests, retry_step_test.cc, cover the store around it).

#include "tools/ctl/retry_step_plan.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;

storage::WorkflowStepState Step(const std::string& name,
                                storage::StepStatus status) {
  storage::WorkflowStepState step;
  step.set_name(name);
  step.set_status(status);
  return step;
}

WorkflowView View(storage::WorkflowPhase phase,
                  const std::vector<storage::WorkflowStepState>& steps) {
  WorkflowView view;
  view.started = true;
  view.state.set_phase(phase);
  for (const storage::WorkflowStepState& s : steps) *view.state.add_steps() = s;
  return view;
}

// reserve done, fraud without revert, ship's revert failed, bill failed.
WorkflowView NeedsAttention() {
  return View(storage::WORKFLOW_PHASE_NEEDS_ATTENTION,
              {Step("reserve", storage::STEP_STATUS_DONE),
               Step("fraud", storage::STEP_STATUS_NO_REVERT),
               Step("ship", storage::STEP_STATUS_REVERT_FAILED),
               Step("bill", storage::STEP_STATUS_FAILED)});
}

void ExpectRefused(const WorkflowView& view, const std::string& step,
                   absl::StatusCode code, const std::string& says) {
  absl::StatusOr<RetryPlan> plan = PlanRetryStep(view, "e-1", step);
  ASSERT_FALSE(plan.ok()) << plan->state.DebugString();
  EXPECT_EQ(plan.status().code(), code) << plan.status();
  EXPECT_THAT(plan.status().message(), HasSubstr(says));
}

TEST(RetryStepPlanTest, RefusesAStepAfterTheFailedRevert) {
  ExpectRefused(NeedsAttention(), "bill", absl::StatusCode::kFailedPrecondition,
                "comes after the failed revert: its compensation already ran; "
                "resume at step 2 (ship)");
}

TEST(RetryStepPlanTest, RefusesAnEarlierStepThatIsNotDone) {
  ExpectRefused(NeedsAttention(), "fraud",
                absl::StatusCode::kFailedPrecondition,
                "is no_revert, not done: nothing to revert");
}

TEST(RetryStepPlanTest, RefusesAStepAfterTheFailedStep) {
  WorkflowView view = View(storage::WORKFLOW_PHASE_COMPENSATED,
                           {Step("fraud", storage::STEP_STATUS_FAILED),
                            Step("bill", storage::STEP_STATUS_SKIPPED)});
  ExpectRefused(view, "bill", absl::StatusCode::kFailedPrecondition,
                "comes after step 0 (fraud), which failed");
}

TEST(RetryStepPlanTest, RefusesACancelledCompensatedWorkflow) {
  WorkflowView view = View(storage::WORKFLOW_PHASE_COMPENSATED,
                           {Step("fraud", storage::STEP_STATUS_FAILED)});
  view.record.cancelled = true;
  ExpectRefused(view, "fraud", absl::StatusCode::kFailedPrecondition,
                "was cancelled and compensated as the cancel asked; commit a "
                "new event to run it again");
}

TEST(RetryStepPlanTest, RefusesARunningWorkflow) {
  WorkflowView view = View(storage::WORKFLOW_PHASE_COMPENSATING,
                           {Step("reserve", storage::STEP_STATUS_DONE)});
  ExpectRefused(view, "reserve", absl::StatusCode::kFailedPrecondition,
                "is compensating, not finished");
}

TEST(RetryStepPlanTest, AWorkflowWithNoStepRunIsNotFound) {
  ExpectRefused(WorkflowView(), "reserve", absl::StatusCode::kNotFound,
                "no step of workflow e-1 has run");
}

TEST(RetryStepPlanTest, ResumingCompensationAfterACancelIsAllowed) {
  WorkflowView view = NeedsAttention();
  view.record.cancelled = true;
  absl::StatusOr<RetryPlan> plan = PlanRetryStep(view, "e-1", "ship");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->state.phase(), storage::WORKFLOW_PHASE_COMPENSATING);
}

}  // namespace
}  // namespace outbox::ctl
