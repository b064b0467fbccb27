// Copyright (c) edge-outbox authors.

#include "tools/ctl/retry_step_plan.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "tools/ctl/text.h"

namespace outbox::ctl {
namespace {

constexpr char kRunAgain[] = "commit a new event to run it again";

// The index of the first step with `status`, or -1.
int FindStatus(const storage::WorkflowState& s, storage::StepStatus status) {
  for (int i = 0; i < s.steps_size(); ++i) {
    if (s.steps(i).status() == status) return i;
  }
  return -1;
}

absl::StatusOr<int> FindStep(const storage::WorkflowState& s,
                             absl::string_view event_id,
                             absl::string_view step) {
  std::vector<std::string> names;
  for (int i = 0; i < s.steps_size(); ++i) {
    if (s.steps(i).name() == step) return i;
    names.push_back(Quote(s.steps(i).name()));
  }
  return absl::NotFoundError(absl::StrCat(
      "workflow ", event_id, " has no step named ", Quote(step),
      " (the steps it reached: ", absl::StrJoin(names, ", "), ")"));
}

std::string StepLabel(const storage::WorkflowState& s, int i) {
  return absl::StrCat(i, " (", Quote(s.steps(i).name()), ")");
}

absl::StatusOr<RetryPlan> ResumeCompensation(storage::WorkflowState s,
                                             absl::string_view event_id,
                                             absl::string_view step) {
  int failed = FindStatus(s, storage::STEP_STATUS_REVERT_FAILED);
  // Or a step in doubt whose resend got no answer: resuming resends it.
  if (failed < 0) failed = FindStatus(s, storage::STEP_STATUS_IN_DOUBT);
  if (failed < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("workflow ", event_id,
                     " needs attention but no step's revert failed and no "
                     "step is in doubt: retry-step has nothing to resume"));
  }
  OUTBOX_ASSIGN_OR_RETURN(const int i, FindStep(s, event_id, step));
  const std::string retry_hint =
      absl::StrCat("resume at step ", StepLabel(s, failed),
                   ", whose revert failed, or an earlier step that is done");
  if (i > failed) {
    return absl::FailedPreconditionError(
        absl::StrCat("step ", StepLabel(s, i), " of workflow ", event_id,
                     " comes after the failed revert: its compensation already "
                     "ran; ",
                     retry_hint));
  }
  if (i < failed && s.steps(i).status() != storage::STEP_STATUS_DONE) {
    return absl::FailedPreconditionError(
        absl::StrCat("step ", StepLabel(s, i), " of workflow ", event_id,
                     " is ", StepStatusName(s.steps(i).status()),
                     ", not done: nothing to revert; ", retry_hint));
  }
  if (s.steps(i).status() != storage::STEP_STATUS_IN_DOUBT) {
    s.mutable_steps(i)->set_status(storage::STEP_STATUS_DONE);
  }
  s.set_phase(storage::WORKFLOW_PHASE_COMPENSATING);
  s.set_next_revert(i);
  s.set_finished_unix_ms(0);
  const std::string summary =
      absl::StrCat("compensation resumes at step ", StepLabel(s, i));
  return RetryPlan{std::move(s), summary};
}

absl::StatusOr<RetryPlan> ResumeForward(storage::WorkflowState s,
                                        absl::string_view event_id,
                                        absl::string_view step) {
  std::vector<std::string> reverted;
  for (const storage::WorkflowStepState& st : s.steps()) {
    if (st.status() == storage::STEP_STATUS_REVERTED) {
      reverted.push_back(Quote(st.name()));
    }
  }
  if (!reverted.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("workflow ", event_id, " was compensated: its steps ",
                     absl::StrJoin(reverted, ", "),
                     " were reverted, and resuming would "
                     "build on what was undone; ",
                     kRunAgain));
  }
  const int failed = FindStatus(s, storage::STEP_STATUS_FAILED);
  if (failed < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("workflow ", event_id,
                     " was compensated but no step failed; ", kRunAgain));
  }
  OUTBOX_ASSIGN_OR_RETURN(const int i, FindStep(s, event_id, step));
  if (i > failed) {
    return absl::FailedPreconditionError(
        absl::StrCat("step ", StepLabel(s, i), " of workflow ", event_id,
                     " comes after step ", StepLabel(s, failed),
                     ", which failed: resume at that step or an earlier one"));
  }
  const std::string summary =
      absl::StrCat("the forward steps resume at step ", StepLabel(s, i));
  // The steps from `i` on run again; those before it stand as done, ready
  // to be reverted should a later step fail.
  s.mutable_steps()->DeleteSubrange(i, s.steps_size() - i);
  for (storage::WorkflowStepState& st : *s.mutable_steps()) {
    if (st.status() == storage::STEP_STATUS_NO_REVERT) {
      st.set_status(storage::STEP_STATUS_DONE);
    }
  }
  s.set_phase(storage::WORKFLOW_PHASE_FORWARD);
  s.set_next_step(static_cast<uint32_t>(i));
  s.clear_next_revert();
  s.clear_cause();
  s.set_finished_unix_ms(0);
  return RetryPlan{std::move(s), summary};
}

}  // namespace

absl::StatusOr<RetryPlan> PlanRetryStep(const WorkflowView& workflow,
                                        absl::string_view event_id,
                                        absl::string_view step) {
  const storage::WorkflowState& s = workflow.state;
  if (!workflow.started) {
    return absl::NotFoundError(
        absl::StrCat("no step of workflow ", event_id,
                     " has run: nothing to resume; `outboxctl replay ",
                     event_id, "` sends its event again"));
  }
  switch (s.phase()) {
    case storage::WORKFLOW_PHASE_NEEDS_ATTENTION:
      // Even after a cancel: finishing its compensation is what it asked.
      return ResumeCompensation(s, event_id, step);
    case storage::WORKFLOW_PHASE_COMPENSATED:
      if (workflow.record.cancelled || s.cancelled()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "workflow ", event_id,
            " was cancelled and compensated as the cancel asked; ", kRunAgain));
      }
      return ResumeForward(s, event_id, step);
    case storage::WORKFLOW_PHASE_COMPLETED:
      return absl::FailedPreconditionError(absl::StrCat(
          "workflow ", event_id, " completed: nothing to retry; ", kRunAgain));
    default:
      return absl::FailedPreconditionError(absl::StrCat(
          "workflow ", event_id, " is ", PhaseName(workflow),
          ", not finished: retry-step resumes one that needs attention, or "
          "one compensated with nothing reverted"));
  }
}

}  // namespace outbox::ctl
