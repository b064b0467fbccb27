// Copyright (c) edge-outbox authors.

#include "lib/workflow_rows.h"

namespace outbox::workflow_rows {

storage::WorkflowHead HeadOf(const storage::WorkflowState& state) {
  storage::WorkflowHead head;
  head.set_phase(state.phase());
  head.set_next_step(state.next_step());
  head.set_next_revert(state.next_revert());
  head.set_cause(state.cause());
  head.set_results(state.results());
  head.set_started_unix_ms(state.started_unix_ms());
  head.set_finished_unix_ms(state.finished_unix_ms());
  head.set_finished_store_clock_ms(state.finished_store_clock_ms());
  if (state.has_entry()) *head.mutable_entry() = state.entry();
  head.set_cancelled(state.cancelled());
  head.set_definition(state.definition());
  head.set_steps(static_cast<uint32_t>(state.steps_size()));
  return head;
}

storage::WorkflowStep StepOf(const storage::WorkflowStepState& step) {
  storage::WorkflowStep row;
  row.set_name(step.name());
  row.set_status(step.status());
  row.set_destination(step.destination());
  row.set_sent(step.sent());
  row.set_attempts(step.attempts());
  row.set_http_status(step.http_status());
  row.set_answer_kept(step.answer_kept());
  row.set_response_truncated(step.response_truncated());
  return row;
}

storage::WorkflowState Assemble(
    const storage::WorkflowHead& head,
    const std::vector<storage::WorkflowStep>& steps,
    const std::map<uint32_t, storage::StepAnswer>& answers) {
  storage::WorkflowState state;
  state.set_rows(true);
  state.set_phase(head.phase());
  state.set_next_step(head.next_step());
  state.set_next_revert(head.next_revert());
  state.set_cause(head.cause());
  state.set_results(head.results());
  state.set_started_unix_ms(head.started_unix_ms());
  state.set_finished_unix_ms(head.finished_unix_ms());
  state.set_finished_store_clock_ms(head.finished_store_clock_ms());
  if (head.has_entry()) *state.mutable_entry() = head.entry();
  state.set_cancelled(head.cancelled());
  state.set_definition(head.definition());
  for (size_t i = 0; i < steps.size(); ++i) {
    const storage::WorkflowStep& row = steps[i];
    storage::WorkflowStepState* s = state.add_steps();
    s->set_name(row.name());
    s->set_status(row.status());
    s->set_destination(row.destination());
    s->set_sent(row.sent());
    s->set_attempts(row.attempts());
    s->set_http_status(row.http_status());
    s->set_answer_kept(row.answer_kept());
    s->set_response_truncated(row.response_truncated());
    auto answer = answers.find(static_cast<uint32_t>(i));
    if (row.answer_kept() && answer != answers.end()) {
      s->set_response(answer->second.body());
    }
  }
  return state;
}

}  // namespace outbox::workflow_rows
