// Copyright (c) edge-outbox authors.

#include "agent/workflow/plan.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/config/workflow_rows.h"
#include "agent/expr/step_id.h"
#include "agent/expr/value_ref.h"
#include "agent/workflow/plan_internal.h"
#include "nlohmann/json.hpp"

namespace outbox {
namespace {

using storage::StepStatus;
using storage::WorkflowPhase;
using storage::WorkflowState;
using storage::WorkflowStepState;

using internal::BeginCompensation;
using internal::Finish;
using internal::Millis;

// Every stored response of `state`, for response: references.
workflow::ValueResolver ResolverFor(const WorkflowState& state,
                                    std::string request) {
  workflow::ValueResolver resolver(std::move(request));
  for (const WorkflowStepState& s : state.steps()) {
    if (s.status() == storage::STEP_STATUS_DONE ||
        s.status() == storage::STEP_STATUS_REVERTED ||
        s.status() == storage::STEP_STATUS_NO_REVERT ||
        s.status() == storage::STEP_STATUS_REVERT_FAILED) {
      resolver.AddResponse(s.name(), s.response(), s.response_truncated());
    }
  }
  return resolver;
}

// The first of `step`'s targets whose conditions hold for the step's
// `payload` and `state`'s answers (ChooseDestination). A first target
// without conditions (a plain `destination`) is taken without copying
// either into a resolver.
absl::StatusOr<std::optional<size_t>> ChooseTarget(
    const workflow::StepSpec& step, const WorkflowState& state,
    const std::string& payload) {
  if (!step.targets.empty() && step.targets[0].choice.conditions.empty()) {
    return std::optional<size_t>(0);
  }
  std::vector<workflow::Choice> choices;
  for (const workflow::TargetSpec& t : step.targets) {
    choices.push_back(t.choice);
  }
  workflow::ValueResolver resolver = ResolverFor(state, payload);
  return workflow::ChooseDestination(choices, resolver);
}

// The request payload of step `step` of `event`.
absl::StatusOr<std::string> StepPayload(const workflow::WorkflowSpec& spec,
                                        const workflow::StepSpec& step,
                                        const PendingEvent& event) {
  if (!spec.per_step_payloads) return event.payload;
  const nlohmann::json doc =
      nlohmann::json::parse(event.payload, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    return absl::FailedPreconditionError(
        "the event's payload is not a JSON object (payloads: per_step)");
  }
  auto it = doc.find(step.name);
  if (it == doc.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the event's payload has no member \"", step.name, "\" for the step"));
  }
  return it->dump();
}

// The request step `i` of `state` was sent: stored in a state stored whole,
// derived from the event again in one written as rows (StepPayload is a
// function of the payload and the definition the workflow runs under).
absl::StatusOr<std::string> SentRequest(const workflow::WorkflowSpec& spec,
                                        const WorkflowState& state, size_t i,
                                        const PendingEvent& event) {
  if (!state.rows()) return state.steps(static_cast<int>(i)).request();
  return StepPayload(spec, spec.steps[i], event);
}

// A state stored whole ("s"), to be written as rows from now on: only the
// answers the configuration reads are kept; requests are derived again.
void ToRows(const workflow::WorkflowSpec& spec, WorkflowState* state) {
  state->set_rows(true);
  for (int i = 0; i < state->steps_size(); ++i) {
    WorkflowStepState* s = state->mutable_steps(i);
    s->clear_request();
    const bool answered = !s->response().empty() || s->response_truncated();
    s->set_answer_kept(answered &&
                       spec.steps[static_cast<size_t>(i)].keep_answer);
    if (!s->answer_kept()) s->clear_response();
  }
}

WorkflowStepState* StepState(WorkflowState* state, size_t i,
                             const std::string& name) {
  while (static_cast<size_t>(state->steps_size()) <= i) state->add_steps();
  WorkflowStepState* s = state->mutable_steps(static_cast<int>(i));
  s->set_name(name);
  return s;
}

// The target step `i` took, by its stored destination.
const workflow::TargetSpec* TakenTarget(const workflow::StepSpec& step,
                                        const WorkflowStepState& s) {
  for (const workflow::TargetSpec& t : step.targets) {
    if (t.choice.destination == s.destination()) return &t;
  }
  return nullptr;
}

// Step `i`, in doubt, sent again as it went out before (same id, request
// and destination): not a forward step, since it may have happened
// already; its answer decides whether it is reverted (workflow/settle.cc).
void PlanResend(const workflow::WorkflowSpec& spec, const AgentConfig& config,
                const PendingEvent& event, size_t i, absl::Time now,
                WorkflowAction* a) {
  const workflow::StepSpec& step = spec.steps[i];
  const WorkflowStepState& s = a->state.steps(static_cast<int>(i));
  a->destination = FindDestination(config, s.destination());
  if (a->destination == nullptr) {
    Finish(a, storage::WORKFLOW_PHASE_NEEDS_ATTENTION,
           Settlement::Kind::kDeadLetterUnsent,
           absl::StrCat("needs attention: step ", step.name,
                        " was in doubt when compensation began, and its "
                        "destination ",
                        s.destination(),
                        " is no longer configured; compensating because ",
                        a->state.cause()),
           now);
    return;
  }
  absl::StatusOr<std::string> request = SentRequest(spec, a->state, i, event);
  if (!request.ok()) {
    Finish(a, storage::WORKFLOW_PHASE_NEEDS_ATTENTION,
           Settlement::Kind::kDeadLetterUnsent,
           absl::StrCat("needs attention: step ", step.name,
                        " was in doubt when compensation began, and its "
                        "request cannot be derived from the event again (",
                        request.status().message(), "); compensating because ",
                        a->state.cause()),
           now);
    return;
  }
  a->kind = WorkflowAction::Kind::kSend;
  a->resend = true;
  a->step = i;
  a->request_id = workflow::StepRequestId(event.id, step.name, false);
  a->method = step.method;
  a->url = a->destination->url;
  a->body = *std::move(request);
}

void PlanCompensation(const workflow::WorkflowSpec& spec,
                      const AgentConfig& config, const PendingEvent& event,
                      absl::Time now, WorkflowAction* a) {
  WorkflowState& state = a->state;
  for (; state.next_revert() >= 0;
       state.set_next_revert(state.next_revert() - 1)) {
    const size_t i = static_cast<size_t>(state.next_revert());
    WorkflowStepState* s = state.mutable_steps(static_cast<int>(i));
    if (s->status() == storage::STEP_STATUS_IN_DOUBT && i < spec.steps.size()) {
      return PlanResend(spec, config, event, i, now, a);
    }
    if (s->status() != storage::STEP_STATUS_DONE || i >= spec.steps.size()) {
      continue;  // not completed: nothing to undo
    }
    const workflow::StepSpec& step = spec.steps[i];
    const workflow::TargetSpec* target = TakenTarget(step, *s);
    if (target == nullptr || !target->revert.has_value()) {
      s->set_status(storage::STEP_STATUS_NO_REVERT);
      continue;
    }
    // A request that cannot be derived again reads as empty: a revert
    // template that reads it fails to build (needs attention) below.
    absl::StatusOr<std::string> request = SentRequest(spec, state, i, event);
    workflow::ValueResolver resolver =
        ResolverFor(state, request.ok() ? *std::move(request) : "");
    absl::StatusOr<std::string> url =
        workflow::Fill(target->revert->url, resolver);
    absl::StatusOr<std::string> body =
        target->revert->payload.has_value()
            ? workflow::Fill(*target->revert->payload, resolver)
            : absl::StatusOr<std::string>("");
    const absl::Status built = !url.ok() ? url.status() : body.status();
    if (!built.ok()) {
      s->set_status(storage::STEP_STATUS_REVERT_FAILED);
      Finish(a, storage::WORKFLOW_PHASE_NEEDS_ATTENTION,
             Settlement::Kind::kDeadLetterUnsent,
             absl::StrCat("needs attention: the revert of step ", step.name,
                          " cannot be built (", built.message(),
                          "); compensating because ", state.cause()),
             now);
      return;
    }
    a->kind = WorkflowAction::Kind::kSend;
    a->revert = true;
    a->step = i;
    a->destination = FindDestination(config, s->destination());
    a->request_id = workflow::StepRequestId(event.id, step.name, true);
    a->method = target->revert->method;
    a->max_attempts = target->revert->max_attempts;
    a->url = *std::move(url);
    a->body = *std::move(body);
    return;
  }
  if (state.cancelled()) {
    Finish(a, storage::WORKFLOW_PHASE_COMPENSATED, Settlement::Kind::kDelivered,
           "", now);
  } else {
    Finish(a, storage::WORKFLOW_PHASE_COMPENSATED,
           Settlement::Kind::kDeadLetterUnsent,
           absl::StrCat("workflow compensated: ", state.cause()), now);
  }
}

}  // namespace

namespace internal {

void BeginCompensation(WorkflowState* state, std::string cause,
                       bool cancelled) {
  state->set_phase(storage::WORKFLOW_PHASE_COMPENSATING);
  state->set_cause(std::move(cause));
  state->set_cancelled(cancelled);
  state->set_next_revert(state->steps_size() - 1);
  for (WorkflowStepState& s : *state->mutable_steps()) {
    if (s.sent() && s.status() == storage::STEP_STATUS_UNSPECIFIED) {
      s.set_status(storage::STEP_STATUS_IN_DOUBT);
    }
  }
}

void Finish(WorkflowAction* a, WorkflowPhase phase, Settlement::Kind settle,
            std::string reason, absl::Time now) {
  a->kind = WorkflowAction::Kind::kSettle;
  a->state.set_phase(phase);
  a->state.set_finished_unix_ms(Millis(now));
  a->settle = settle;
  a->reason = std::move(reason);
}

bool PlanForward(const workflow::WorkflowSpec& spec, const AgentConfig& config,
                 const PendingEvent& event, absl::Time now, WorkflowAction* a) {
  WorkflowState& state = a->state;
  while (state.next_step() < spec.steps.size()) {
    const size_t i = state.next_step();
    const workflow::StepSpec& step = spec.steps[i];
    WorkflowStepState* s = StepState(&state, i, step.name);
    auto fail = [&](absl::string_view why) {
      s->set_status(storage::STEP_STATUS_FAILED);
      BeginCompensation(
          &state, absl::StrCat("step ", step.name, " failed: ", why), false);
      return false;
    };
    absl::StatusOr<std::string> payload = StepPayload(spec, step, event);
    if (!payload.ok()) return fail(payload.status().message());
    absl::StatusOr<std::optional<size_t>> chosen =
        ChooseTarget(step, state, *payload);
    if (!chosen.ok()) return fail(chosen.status().message());
    if (!chosen->has_value() && !step.skip_on_no_match) {
      return fail("no `choose` target's conditions hold (on_no_match: fail)");
    }
    if (!chosen->has_value()) {
      s->set_status(storage::STEP_STATUS_SKIPPED);
      storage::StepResult& row = a->rows.emplace_back();
      row.set_step(step.name);
      row.set_outcome("skipped");
      row.set_unix_ms(Millis(now));
      state.set_next_step(static_cast<uint32_t>(i + 1));
      continue;
    }
    const std::string& name = step.targets[**chosen].choice.destination;
    a->destination = FindDestination(config, name);
    s->set_destination(name);
    if (!state.rows()) s->set_request(*payload);  // rows: derived again
    a->step = i;
    a->method = step.method;
    a->url = a->destination->url;
    a->body = *std::move(payload);
    // Not marked in the stored state: mark first, send once it is durable
    // and planned again (then a cancel recorded before the mark is seen).
    if (!s->sent()) {
      s->set_sent(true);
      a->kind = WorkflowAction::Kind::kMark;
      return true;  // no request id yet (a SHA-1): that plan makes it
    }
    a->request_id = workflow::StepRequestId(event.id, step.name, false);
    return true;
  }
  Finish(a, storage::WORKFLOW_PHASE_COMPLETED, Settlement::Kind::kDelivered, "",
         now);
  return true;
}

}  // namespace internal

namespace {

// The state of a workflow nothing is stored of yet, starting at `now`
// (PlanState makes it rows if the configuration writes rows).
WorkflowState NewState(absl::Time now) {
  WorkflowState state;
  state.set_phase(storage::WORKFLOW_PHASE_FORWARD);
  state.set_next_revert(-1);
  state.set_started_unix_ms(Millis(now));
  return state;
}

// Whether `state`'s steps are still `spec`'s, by position; if not, `a`
// settles the workflow as needing attention. Steps are stored by position:
// running the configured ones against another configuration's progress
// could skip or repeat a step.
bool StepsMatch(const workflow::WorkflowSpec& spec, const WorkflowState& state,
                absl::Time now, WorkflowAction* a) {
  for (int i = 0; i < state.steps_size(); ++i) {
    const size_t at = static_cast<size_t>(i);
    if (at < spec.steps.size() &&
        spec.steps[at].name == state.steps(i).name()) {
      continue;
    }
    a->kind = WorkflowAction::Kind::kSettle;
    a->settle = Settlement::Kind::kDeadLetterUnsent;
    a->state.set_phase(storage::WORKFLOW_PHASE_NEEDS_ATTENTION);
    a->state.set_finished_unix_ms(Millis(now));
    a->reason = absl::StrCat(
        "needs attention: the workflow's steps changed since it started "
        "(step ",
        i, " was \"", state.steps(i).name(), "\", now \"",
        at < spec.steps.size() ? spec.steps[at].name : "(none)",
        "\"); nothing was sent; see outboxctl show");
    return false;
  }
  return true;
}

// PlanWorkflow once `a.state` holds the workflow's state; `cancel_reason`
// is the recorded cancel's, null when none is.
WorkflowAction PlanState(const workflow::WorkflowSpec& spec,
                         const AgentConfig& config, const PendingEvent& event,
                         WorkflowAction a, const std::string* cancel_reason,
                         absl::Time now) {
  WorkflowState& state = a.state;
  if (!StepsMatch(spec, state, now, &a)) return a;
  // A new workflow, or one stored whole, is written as rows from now on if
  // the configuration says so (`workflow_storage`); a stored state is
  // converted by the write that settles this plan (lib/store_workflow_rows).
  if (!state.rows() && workflow::WriteRows(config.agent.workflow_rows)) {
    ToRows(spec, &state);
  }
  // A new workflow runs under `spec` from now on; so does one stored before
  // definitions were kept, whose steps match it.
  if (state.definition().empty()) state.set_definition(spec.definition_id);
  const WorkflowPhase phase = state.phase();
  if (cancel_reason != nullptr &&
      (phase == storage::WORKFLOW_PHASE_FORWARD ||
       phase == storage::WORKFLOW_PHASE_COMPLETED)) {
    state.set_finished_unix_ms(0);
    BeginCompensation(&state, absl::StrCat("cancelled: ", *cancel_reason),
                      true);
  } else if (phase != storage::WORKFLOW_PHASE_FORWARD &&
             phase != storage::WORKFLOW_PHASE_COMPENSATING) {
    // Finished already (settled in the same write as its phase, so only a
    // queue write from elsewhere gets here): leave it as it is.
    a.kind = WorkflowAction::Kind::kSettle;
    a.settle = phase == storage::WORKFLOW_PHASE_COMPLETED
                   ? Settlement::Kind::kDelivered
                   : Settlement::Kind::kDeadLetterUnsent;
    a.reason = "workflow already finished";
    return a;
  }
  if (state.phase() == storage::WORKFLOW_PHASE_FORWARD &&
      internal::PlanForward(spec, config, event, now, &a)) {
    return a;
  }
  PlanCompensation(spec, config, event, now, &a);
  return a;
}

}  // namespace

WorkflowAction PlanWorkflow(const workflow::WorkflowSpec& spec,
                            const AgentConfig& config,
                            const PendingEvent& event,
                            const WorkflowRecord* record, absl::Time now) {
  WorkflowAction a;
  if (record == nullptr || record->state.empty() ||
      !a.state.ParseFromString(record->state)) {
    a.state = NewState(now);
  }
  const bool cancelled = record != nullptr && record->cancelled;
  return PlanState(spec, config, event, std::move(a),
                   cancelled ? &record->cancel_reason : nullptr, now);
}

WorkflowAction PlanWorkflowFrom(const workflow::WorkflowSpec& spec,
                                const AgentConfig& config,
                                const PendingEvent& event,
                                storage::WorkflowState state, absl::Time now) {
  WorkflowAction a;
  a.state = std::move(state);
  return PlanState(spec, config, event, std::move(a), nullptr, now);
}

}  // namespace outbox
