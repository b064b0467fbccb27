// Copyright (c) edge-outbox authors.
//
// The agent's loop for workflow events: plan (workflow/plan.h), send, and
// settle the answer with the workflow's new state in the same write. The
// round that settles a finished step syncs the store before it plans the
// next one (agent_results.cc), so a step's result is durable before the
// next step starts, and so is the next step's sent mark, which rides in
// the same write; a step not marked yet is marked in a round of its own.

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/agent_impl.h"
#include "base/status_macros.h"
#include "lib/crash_points.h"

namespace outbox {

absl::StatusOr<bool> AgentImpl::StartWorkflowEvent(
    PendingEvent event, const workflow::WorkflowSpec& spec, absl::Time now) {
  absl::StatusOr<WorkflowRecord> record = store_->GetWorkflow(event.id);
  if (!record.ok() && !absl::IsNotFound(record.status())) {
    return record.status();
  }
  WorkflowAction action =
      PlanWorkflow(spec, config_, event, record.ok() ? &*record : nullptr, now);
  if (test_.skip_in_doubt_resend && action.resend) {
    // Broken on purpose: the step in doubt is passed over, as if it had
    // never been sent (what compensation did before the resend).
    storage::WorkflowStepState* s =
        action.state.mutable_steps(static_cast<int>(action.step));
    s->set_status(storage::STEP_STATUS_UNSPECIFIED);
    s->set_sent(false);
    record->state = action.state.SerializeAsString();
    action = PlanWorkflow(spec, config_, event, &*record, now);
  }
  if (action.kind == WorkflowAction::Kind::kSettle) {
    settled_.push_back(FinalSettlement(action, std::move(event)));
    return true;
  }
  auto not_done = not_done_steps_.find(event.id);
  if (action.resend && not_done != not_done_steps_.end() &&
      not_done->second == action.step) {
    // Known not to have taken effect (not_done_steps_): compensation goes
    // on without it, once that is durable (a cut would leave it in doubt).
    not_done_steps_.erase(not_done);
    settled_.push_back(NotDoneSettlement(action, std::move(event)));
    return true;
  }
  if (action.kind == WorkflowAction::Kind::kMark) {
    // The step's sent mark must be durable before the request can leave:
    // this round's settle batch writes it (with every other mark of the
    // round, one sync for all), then StartMarkedSteps plans it again,
    // reading the mark (and any cancel) back before it sends.
    settled_.push_back(MarkSettlement(action, event));
    marked_.push_back({std::move(event), &spec});
    return true;
  }
  const uint64_t tag = next_tag_++;
  HttpRequest request =
      BuildWorkflowRequest(action, event, config_.agent, now, tag);
  internal::CrashPoint(action.revert ? internal::kWorkflowRevertBeforeSend
                                     : internal::kWorkflowStepBeforeSend);
  absl::Status started = http_->StartRequest(std::move(request));
  if (absl::IsResourceExhausted(started)) return false;  // next round
  if (!started.ok()) {
    // Refused by the transport itself (a filled-in URL it cannot use):
    // sending it again cannot help, so the step (or revert) fails for good.
    Decision d;
    d.kind = Decision::Kind::kDeadLetter;
    d.error = absl::StrCat("cannot be sent: ", started.message());
    settled_.push_back(WorkflowSettlement(action, spec, d, HttpResult(),
                                          std::move(event), config_, now));
    return true;
  }
  ++stats_.requests;
  const bool was_not_done = not_done != not_done_steps_.end() &&
                            not_done->second == action.step && !action.revert;
  if (was_not_done) not_done_steps_.erase(not_done);  // it may take effect now
  const Destination* destination = action.destination;
  const bool probe = reachability_.OnSend(destination->name);
  in_flight_seqs_.insert(event.seq);
  auto flight = std::make_unique<WorkflowFlight>();
  flight->spec = &spec;
  flight->action = std::move(action);
  flight->was_not_done = was_not_done;
  in_flight_.emplace(
      tag,
      InFlight{std::move(event), destination, probe, std::move(flight), {}});
  return true;
}

absl::Status AgentImpl::StartMarkedSteps(absl::Time now) {
  std::vector<MarkedStep> marked;
  marked.swap(marked_);
  for (MarkedStep& m : marked) {
    absl::StatusOr<bool> started =
        StartWorkflowEvent(std::move(m.event), *m.spec, now);
    if (!started.ok()) return started.status();
    if (!*started) break;  // full: the next rounds send them
  }
  // A step marked again here (its event no longer pending) waits for a
  // later round.
  marked_.clear();
  return absl::OkStatus();
}

LaneGate AgentImpl::WorkflowGate(
    const workflow::WorkflowSpec& spec, absl::Time steady,
    absl::flat_hash_set<std::string>* probing) const {
  LaneGate gate = LaneGate::kOpen;
  for (const workflow::StepSpec& step : spec.steps) {
    for (const workflow::TargetSpec& target : step.targets) {
      const LaneGate g =
          reachability_.Gate(target.choice.destination, steady, probing);
      if (g == LaneGate::kClosed) return LaneGate::kClosed;
      if (g == LaneGate::kOne) gate = LaneGate::kOne;
    }
  }
  return gate;
}

void AgentImpl::NoteWorkflowSettled(const Settlement& s) {
  if (s.workflow_marked_step >= 0) {
    // (If the store dropped the mark under a cancel, the step is not in
    // doubt and this entry is never consulted.)
    not_done_steps_[s.event.id] = static_cast<size_t>(s.workflow_marked_step);
  } else if (s.kind != Settlement::Kind::kStepDone &&
             s.kind != Settlement::Kind::kAttempt) {
    not_done_steps_.erase(s.event.id);  // it left the queue
  }
}

void AgentImpl::NoteNotDone(const InFlight& flight) {
  const WorkflowAction& a = flight.workflow->action;
  if (!a.revert && !a.resend) not_done_steps_[flight.event.id] = a.step;
}

Settlement AgentImpl::SettleWorkflowAnswer(InFlight flight, const Decision& d,
                                           const HttpResult& result,
                                           absl::Time now) {
  const WorkflowFlight& w = *flight.workflow;
  // The receiver may have acted on it: a power cut before its result is
  // written means the same request again, with the same id.
  internal::CrashPoint(w.action.revert ? internal::kWorkflowRevertAfterAnswer
                                       : internal::kWorkflowStepAfterAnswer);
  return WorkflowSettlement(w.action, *w.spec, d, result,
                            std::move(flight.event), config_, now);
}

void AgentImpl::LogWorkflowSettlement(const Settlement& s) {
  if (s.workflow_state.empty()) return;
  storage::WorkflowState state;
  if (!state.ParseFromString(s.workflow_state)) return;
  switch (state.phase()) {
    case storage::WORKFLOW_PHASE_COMPENSATING:
      if (s.kind == Settlement::Kind::kStepDone &&
          state.next_revert() == state.steps_size() - 1) {
        Log(LogSeverity::kWarning, LogEvent::kWorkflowCompensating,
            absl::StrCat("workflow of event ", s.event.id,
                         ": reverting its completed steps, last first (",
                         state.cause(), ")"),
            s.event.id);
      }
      break;
    case storage::WORKFLOW_PHASE_NEEDS_ATTENTION:
      metrics_.OnWorkflowFinished(AgentMetrics::WorkflowEnd::kNeedsAttention);
      Log(LogSeverity::kError, LogEvent::kWorkflowNeedsAttention,
          absl::StrCat("workflow of event ", s.event.id, ": ", s.reason,
                       "; nothing more runs until outboxctl retry-step"),
          s.event.id);
      break;
    case storage::WORKFLOW_PHASE_COMPLETED:
      if (s.kind == Settlement::Kind::kDelivered) {
        metrics_.OnWorkflowFinished(AgentMetrics::WorkflowEnd::kCompleted);
      }
      break;
    case storage::WORKFLOW_PHASE_COMPENSATED:
      metrics_.OnWorkflowFinished(AgentMetrics::WorkflowEnd::kCompensated);
      break;
    default:
      break;
  }
}

}  // namespace outbox
