// Copyright (c) edge-outbox authors.

#include "tests/testing/ctl_workflow_fixture.h"

#include <memory>
#include <utility>

#include "absl/time/clock.h"
#include "tests/testing/events.h"
#include "tests/testing/status.h"
#include "tests/testing/workflow_state.h"

namespace outbox::ctl {

storage::WorkflowStepState Step(const std::string& name,
                                storage::StepStatus status) {
  storage::WorkflowStepState step;
  step.set_name(name);
  step.set_status(status);
  step.set_destination(name + "-service");
  step.set_http_status(status == storage::STEP_STATUS_FAILED ? 500 : 200);
  step.set_request("{\"step\":\"" + name + "\"}");
  return step;
}

storage::WorkflowState State(
    storage::WorkflowPhase phase,
    const std::vector<storage::WorkflowStepState>& steps) {
  storage::WorkflowState state;
  state.set_phase(phase);
  for (const storage::WorkflowStepState& s : steps) *state.add_steps() = s;
  state.set_next_step(static_cast<uint32_t>(steps.size()));
  state.set_started_unix_ms(absl::ToUnixMillis(absl::Now()));
  return state;
}

storage::StepResult Row(const std::string& step, bool revert, uint32_t attempt,
                        int http_status, const std::string& outcome) {
  storage::StepResult row;
  row.set_step(step);
  row.set_revert(revert);
  row.set_attempt(attempt);
  row.set_method(revert ? "DELETE" : "POST");
  row.set_url("http://127.0.0.1:9/" + step);
  row.set_http_status(http_status);
  row.set_duration_us(1500);
  row.set_outcome(outcome);
  if (outcome != "done") row.set_error("HTTP " + std::to_string(http_status));
  row.set_unix_ms(absl::ToUnixMillis(absl::Now()));
  return row;
}

std::string CtlWorkflowTest::MakeWorkflow(
    Settlement::Kind kind, storage::WorkflowState state,
    const std::vector<storage::StepResult>& rows) {
  const std::string id =
      Commit(testing::MakeEvent("order.created", "till-1", "{\"sale\":1}"));
  std::unique_ptr<Store> store = OpenStore();
  if (store == nullptr) return "";
  absl::StatusOr<PendingEvent> event = store->FindPending(id);
  EXPECT_OUTBOX_OK(event);
  if (!event.ok()) return "";
  const bool finished =
      state.phase() == storage::WORKFLOW_PHASE_COMPLETED ||
      state.phase() == storage::WORKFLOW_PHASE_COMPENSATED ||
      state.phase() == storage::WORKFLOW_PHASE_NEEDS_ATTENTION;
  if (finished) state.set_finished_unix_ms(absl::ToUnixMillis(absl::Now()));
  state.set_results(static_cast<uint32_t>(rows.size()));
  Settlement s;
  s.kind = kind;
  s.event = *event;
  s.reason = "workflow step failed";
  s.attempt.error = "HTTP 500";
  s.attempt.http_status = 500;
  s.attempt.next_attempt = absl::Now();
  s.workflow_state = state.SerializeAsString();
  for (const storage::StepResult& r : rows) {
    s.workflow_results.push_back(r.SerializeAsString());
  }
  absl::StatusOr<SettleResult> settled = store->Settle({s});
  EXPECT_OUTBOX_OK(settled);
  EXPECT_OUTBOX_OK(store->Sync());
  EXPECT_OUTBOX_OK(store->Close());
  return id;
}

std::string CtlWorkflowTest::NeedsAttention(
    const std::vector<storage::StepResult>& rows) {
  storage::WorkflowState state =
      State(storage::WORKFLOW_PHASE_NEEDS_ATTENTION,
            {Step("reserve", storage::STEP_STATUS_DONE),
             Step("fraud", storage::STEP_STATUS_NO_REVERT),
             Step("ship", storage::STEP_STATUS_REVERT_FAILED),
             Step("bill", storage::STEP_STATUS_FAILED)});
  state.set_next_revert(2);
  state.set_cause("bill: HTTP 500");
  return MakeWorkflow(Settlement::Kind::kDeadLetter, state, rows);
}

storage::WorkflowState CtlWorkflowTest::StoredState(const std::string& id) {
  storage::WorkflowState state;
  std::unique_ptr<Store> store = OpenStore();
  if (store == nullptr) return state;
  state = testing::StoredWorkflowState(store.get(), id);
  EXPECT_OUTBOX_OK(store->Close());
  return state;
}

bool CtlWorkflowTest::IsPending(const std::string& id) {
  std::unique_ptr<Store> store = OpenStore();
  if (store == nullptr) return false;
  const bool pending = store->FindPending(id).ok();
  EXPECT_OUTBOX_OK(store->Close());
  return pending;
}

bool CtlWorkflowTest::IsDead(const std::string& id) {
  std::unique_ptr<Store> store = OpenStore();
  if (store == nullptr) return false;
  const bool dead = store->FindDeadLetter(id).ok();
  EXPECT_OUTBOX_OK(store->Close());
  return dead;
}

}  // namespace outbox::ctl
