// Copyright (c) edge-outbox authors.
//
// What `outboxctl retry-step ID STEP` writes: the state that resumes a
// dead-lettered workflow at a step, worked out from the stored one without
// touching the store, so that every refusal is decided before anything is
// written.

#ifndef OUTBOX_TOOLS_CTL_RETRY_STEP_PLAN_H_
#define OUTBOX_TOOLS_CTL_RETRY_STEP_PLAN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/storage.pb.h"
#include "tools/ctl/workflow_view.h"

namespace outbox::ctl {

// Plain data.
struct RetryPlan {
  storage::WorkflowState state;  // for Store::RetryWorkflow
  std::string summary;           // what resumes where, for the operator
};

// The state that resumes `workflow` (the stored workflow of the dead letter
// `event_id`) at the step named `step`:
//  - NEEDS_ATTENTION: compensation resumes at `step`, which must be the
//    step whose revert failed or an earlier step still DONE (the operator
//    undid the failed one by hand). That step is DONE again, the phase
//    COMPENSATING from its index down.
//  - COMPENSATED with no step reverted (nothing was undone: the first step
//    failed, or only steps without a revert ran), and not cancelled: the
//    forward steps resume at `step`, at or before the one that failed. The
//    steps from `step` on are forgotten, those before it without a revert
//    are DONE again, and the cause is cleared.
// Errors: kNotFound if no step has run, or none is named `step`;
// kFailedPrecondition otherwise (still running, completed, steps reverted,
// cancelled, or `step` in the wrong place), saying what to do instead.
absl::StatusOr<RetryPlan> PlanRetryStep(const WorkflowView& workflow,
                                        absl::string_view event_id,
                                        absl::string_view step);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_RETRY_STEP_PLAN_H_
