// Copyright (c) edge-outbox authors.
//
// The settling half of the workflow engine (workflow/plan.h): what the
// store records once a planned request answered, and the request itself.

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/send/webhook_request.h"
#include "agent/workflow/plan.h"
#include "agent/workflow/plan_internal.h"
#include "lib/proto_peek.h"

namespace outbox {
namespace {

using internal::Millis;
using storage::WorkflowState;
using storage::WorkflowStepState;

std::string Cut(const std::string& body, size_t max, bool* cut) {
  *cut = body.size() > max;
  return *cut ? body.substr(0, max) : body;
}

storage::StepResult ResultRow(const WorkflowAction& action,
                              const workflow::StepSpec& step, const Decision& d,
                              const HttpResult& result,
                              const PendingEvent& event,
                              const AgentSettings& settings, absl::Time now) {
  storage::StepResult row;
  row.set_step(step.name);
  row.set_revert(action.revert);
  row.set_resend(action.resend);
  row.set_attempt(event.attempts + 1);
  row.set_request_id(action.request_id);
  row.set_method(action.method);
  row.set_url(action.url);
  row.set_destination(action.destination->name);
  row.set_http_status(result.http_status);
  row.set_duration_us(absl::ToInt64Microseconds(result.elapsed));
  bool cut = false;
  row.set_request_body(Cut(action.body, settings.result_body_bytes, &cut));
  row.set_request_truncated(cut);
  row.set_response_body(Cut(result.body, settings.result_body_bytes, &cut));
  row.set_response_truncated(cut || result.body_truncated);
  row.set_error(d.kind == Decision::Kind::kDelivered ? "" : d.error);
  row.set_unix_ms(Millis(now));
  return row;
}

// A 2xx to `action`: a revert reverted its step; a step (or a step in doubt
// resent) is done, its answer kept for the revert templates.
void ApplyDone(const WorkflowAction& action, const workflow::StepSpec& step,
               const HttpResult& result, uint32_t attempts,
               WorkflowState* state) {
  WorkflowStepState* st = state->mutable_steps(static_cast<int>(action.step));
  if (action.revert) {
    st->set_status(storage::STEP_STATUS_REVERTED);
    state->set_next_revert(static_cast<int32_t>(action.step) - 1);
    return;
  }
  st->set_status(storage::STEP_STATUS_DONE);
  st->set_http_status(result.http_status);
  if (state->rows()) {
    // Written once in its own row, and only when a reference reads it.
    st->set_attempts(attempts);
    st->set_answer_kept(step.keep_answer);
    st->set_response(step.keep_answer ? result.body : "");
    st->set_response_truncated(step.keep_answer && result.body_truncated);
  } else {
    st->set_response(result.body);
    st->set_response_truncated(result.body_truncated);
  }
  // A resent step in doubt stays next to revert; a forward one moves on.
  if (!action.resend) {
    state->set_next_step(static_cast<uint32_t>(action.step + 1));
  }
}

void NeedsAttention(const std::string& why, absl::Time now,
                    WorkflowState* state, Settlement* s) {
  state->set_phase(storage::WORKFLOW_PHASE_NEEDS_ATTENTION);
  state->set_finished_unix_ms(Millis(now));
  s->reason = absl::StrCat("needs attention: ", why, "; compensating because ",
                           state->cause());
}

// `action` failed for good (`d`). Without any HTTP answer to its last
// attempt (`result.transport` failed after the request may have left), a
// step's outcome is unknown, unlike a rejection's.
void ApplyFailure(const WorkflowAction& action, const workflow::StepSpec& step,
                  const Decision& d, const HttpResult& result, absl::Time now,
                  WorkflowState* state, Settlement* s) {
  WorkflowStepState* st = state->mutable_steps(static_cast<int>(action.step));
  const bool unanswered = !result.transport.ok();
  if (action.revert) {
    st->set_status(storage::STEP_STATUS_REVERT_FAILED);
    NeedsAttention(absl::StrCat("the revert of step ", step.name,
                                " failed for good (", d.error, ")"),
                   now, state, s);
    return;
  }
  if (action.resend && unanswered) {
    NeedsAttention(
        absl::StrCat("step ", step.name,
                     " was in doubt (sent, no answer) when compensation "
                     "began; resent under its id, its retries ran out "
                     "without an answer (",
                     d.error, "): it may have happened and is not reverted"),
        now, state, s);
    return;
  }
  s->kind = Settlement::Kind::kStepDone;  // reverts get fresh budgets
  if (action.resend) {
    // Rejected: not done, nothing to revert.
    st->set_status(storage::STEP_STATUS_FAILED);
    state->set_next_revert(static_cast<int32_t>(action.step) - 1);
    return;
  }
  st->set_status(unanswered ? storage::STEP_STATUS_IN_DOUBT
                            : storage::STEP_STATUS_FAILED);
  internal::BeginCompensation(
      state, absl::StrCat("step ", step.name, " failed: ", d.error), false);
}

// `s` as kind after the answer `d` to `action`, which changes `state`.
void ApplyAnswer(const WorkflowAction& action, const workflow::StepSpec& step,
                 const Decision& d, const HttpResult& result, absl::Time now,
                 WorkflowState* state, storage::StepResult* row,
                 Settlement* s) {
  switch (d.kind) {
    case Decision::Kind::kDelivered:
      row->set_outcome("done");
      s->kind = Settlement::Kind::kStepDone;
      ApplyDone(action, step, result, s->event.attempts + 1, state);
      return;
    case Decision::Kind::kDeadLetter:
    case Decision::Kind::kOffline:
      row->set_outcome("failed");
      ApplyFailure(action, step, d, result, now, state, s);
      return;
    case Decision::Kind::kRetry:
    case Decision::Kind::kHoldDestination:  // held before it gets here
      row->set_outcome("retry");
      return;
    case Decision::Kind::kPauseDestination:
      row->set_outcome("paused");
      return;
  }
}

// After a forward step's 2xx: marks the step planned next as sent in the
// same write, which the agent syncs before it plans (and sends) that step,
// so its first send costs no write of its own. When no step is left, the
// workflow completes in that write instead: a delivery like any other,
// synced with the acknowledgements (a cut before then resends the last
// step under its own id). Skips decided on the way are recorded with it
// (the next plan would make the same ones).
void MarkNext(const workflow::WorkflowSpec& spec, const AgentConfig& config,
              absl::Time now, WorkflowState* state,
              std::vector<storage::StepResult>* rows, Settlement* s) {
  WorkflowAction next;
  next.state = *state;
  if (!internal::PlanForward(spec, config, s->event, now, &next)) {
    return;  // compensating: its own plan decides the first revert
  }
  const bool completed = next.kind == WorkflowAction::Kind::kSettle;
  if (!completed && next.kind != WorkflowAction::Kind::kMark) return;
  *state = std::move(next.state);
  rows->insert(rows->end(), next.rows.begin(), next.rows.end());
  if (completed) {
    s->kind = next.settle;  // kDelivered
    return;
  }
  s->workflow_marked_step = static_cast<int32_t>(next.step);
}

// Numbers `rows` after those `*state` counts (and counts them in it) and
// puts both into `s`.
void AttachWorkflow(WorkflowState* state,
                    const std::vector<storage::StepResult>& rows,
                    Settlement* s) {
  s->first_result = state->results();
  state->set_results(state->results() + static_cast<uint32_t>(rows.size()));
  s->workflow_results.reserve(rows.size());
  for (const storage::StepResult& row : rows) {
    s->workflow_results.push_back(row.SerializeAsString());
  }
  s->workflow_state = state->SerializeAsString();
}

// The row of the request `s` settles (the last one not a skip), if any.
// Peeked: a row carries the request and answer bodies.
const std::string* AnswerRow(const Settlement& s) {
  for (auto it = s.workflow_results.rbegin(); it != s.workflow_results.rend();
       ++it) {
    if (PeekBytes(*it, storage::StepResult::kOutcomeFieldNumber) != "skipped") {
      return &*it;
    }
  }
  return nullptr;
}

// `d` for `action`, but a failure for good when `action` is a revert whose
// own budget (Revert.max_attempts) this attempt spends: it then ends as a
// revert whose destination's schedule ran out, never as a silent stop.
Decision WithRevertBudget(const WorkflowAction& action, Decision d,
                          const PendingEvent& event) {
  if (!action.revert || action.max_attempts <= 0 ||
      d.kind != Decision::Kind::kRetry ||
      event.attempts + 1 < static_cast<uint32_t>(action.max_attempts)) {
    return d;
  }
  d.kind = Decision::Kind::kDeadLetter;
  d.error = absl::StrCat(d.error, "; the revert's max_attempts (",
                         action.max_attempts, ") are spent");
  return d;
}

}  // namespace

Settlement WorkflowSettlement(WorkflowAction action,
                              const workflow::WorkflowSpec& spec,
                              const Decision& answer, const HttpResult& result,
                              PendingEvent event, const AgentConfig& config,
                              absl::Time now, WorkflowState* written) {
  const workflow::StepSpec& step = spec.steps[action.step];
  const Decision decision = WithRevertBudget(action, answer, event);
  std::vector<storage::StepResult> rows = std::move(action.rows);
  rows.push_back(
      ResultRow(action, step, decision, result, event, config.agent, now));
  Settlement s = SettlementFor(decision, std::move(event), now);
  WorkflowState state = std::move(action.state);
  ApplyAnswer(action, step, decision, result, now, &state, &rows.back(), &s);
  if (decision.kind == Decision::Kind::kDelivered && !action.revert &&
      !action.resend) {
    MarkNext(spec, config, now, &state, &rows, &s);
  }
  AttachWorkflow(&state, rows, &s);
  if (written != nullptr) *written = std::move(state);
  return s;
}

Settlement MarkSettlement(WorkflowAction action, PendingEvent event,
                          WorkflowState* written) {
  Settlement s;
  s.kind = Settlement::Kind::kStepDone;
  s.event = std::move(event);
  s.workflow_marked_step = static_cast<int32_t>(action.step);
  AttachWorkflow(&action.state, action.rows, &s);
  if (written != nullptr) *written = std::move(action.state);
  return s;
}

Settlement NotDoneSettlement(const WorkflowAction& action, PendingEvent event) {
  WorkflowState state = action.state;
  WorkflowStepState* st = state.mutable_steps(static_cast<int>(action.step));
  st->set_sent(false);
  st->set_status(storage::STEP_STATUS_UNSPECIFIED);
  Settlement s;
  s.kind = Settlement::Kind::kStepDone;
  s.event = std::move(event);
  AttachWorkflow(&state, action.rows, &s);
  return s;
}

bool SettlesRevert(const Settlement& s) {
  const std::string* row = AnswerRow(s);
  return row != nullptr &&
         PeekVarint(*row, storage::StepResult::kRevertFieldNumber, 0) != 0;
}

bool SettlesMarkOnly(const Settlement& s) { return AnswerRow(s) == nullptr; }

storage::WorkflowPhase SettledPhase(const Settlement& s) {
  return static_cast<storage::WorkflowPhase>(
      PeekVarint(s.workflow_state, storage::WorkflowState::kPhaseFieldNumber,
                 storage::WORKFLOW_PHASE_UNSPECIFIED));
}

PendingEvent RequeuedAfterStepDone(PendingEvent event, absl::Time now) {
  event.attempts = 0;
  event.first_attempt = absl::InfinitePast();
  event.last_attempt = absl::InfinitePast();
  event.retry_age = absl::ZeroDuration();
  event.last_error.clear();
  event.last_http_status = 0;
  event.next_attempt = absl::FromUnixMillis(absl::ToUnixMillis(now));
  return event;
}

Settlement FinalSettlement(const WorkflowAction& action, PendingEvent event) {
  Settlement s;
  s.kind = action.settle;
  s.event = std::move(event);
  s.reason = action.reason;
  WorkflowState state = action.state;
  AttachWorkflow(&state, action.rows, &s);
  return s;
}

HttpRequest BuildWorkflowRequest(const WorkflowAction& action,
                                 const PendingEvent& event,
                                 const AgentSettings& settings, absl::Time now,
                                 uint64_t tag) {
  RequestParts parts;
  parts.id = action.request_id;
  parts.type = event.type;
  // A step's own member of the payload, a revert's template: JSON.
  const bool whole = !action.revert && action.body == event.payload;
  parts.content_type = whole ? event.content_type : "application/json";
  parts.url = action.url;
  parts.method = action.method;
  parts.body = action.body;
  HttpRequest request =
      BuildRequestFrom(std::move(parts), *action.destination, now, tag);
  request.max_response_body = action.revert ? settings.result_body_bytes
                                            : settings.workflow_response_bytes;
  return request;
}

}  // namespace outbox
