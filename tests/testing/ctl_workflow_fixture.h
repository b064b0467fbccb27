// Copyright (c) edge-outbox authors.
//
// outboxctl's workflow commands against stores that hold workflows. The
// agent's engine is not needed: states and result rows are written as it
// writes them, through Store::Settle with the storage protos.

#ifndef OUTBOX_TESTS_TESTING_CTL_WORKFLOW_FIXTURE_H_
#define OUTBOX_TESTS_TESTING_CTL_WORKFLOW_FIXTURE_H_

#include <string>
#include <vector>

#include "outbox/store.h"
#include "proto/storage.pb.h"
#include "tests/testing/ctl_fixture.h"

namespace outbox::ctl {

storage::WorkflowStepState Step(const std::string& name,
                                storage::StepStatus status);
storage::WorkflowState State(
    storage::WorkflowPhase phase,
    const std::vector<storage::WorkflowStepState>& steps);
storage::StepResult Row(const std::string& step, bool revert, uint32_t attempt,
                        int http_status, const std::string& outcome);

class CtlWorkflowTest : public CtlTest {
 protected:
  // Commits an event of type "order.created" and settles it as `kind` with
  // `state` and `rows`, as the agent's engine does after a step. A finished
  // state gets its finished time. Returns the event id.
  std::string MakeWorkflow(Settlement::Kind kind, storage::WorkflowState state,
                           const std::vector<storage::StepResult>& rows = {});

  // A dead letter whose workflow needs attention: reserve done, fraud done
  // without a revert, ship's revert failed, bill failed (next revert: 2).
  std::string NeedsAttention(const std::vector<storage::StepResult>& rows = {});

  // The stored state of `id`'s workflow, read through the Store API.
  storage::WorkflowState StoredState(const std::string& id);
  // True if `id` is pending / a dead letter, read through the Store API.
  bool IsPending(const std::string& id);
  bool IsDead(const std::string& id);
};

}  // namespace outbox::ctl

#endif  // OUTBOX_TESTS_TESTING_CTL_WORKFLOW_FIXTURE_H_
