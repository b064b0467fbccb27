// Copyright (c) edge-outbox authors.
//
// The agent's loop for workflow events: plan (workflow/plan.h), send, and
// settle the answer with the workflow's new state in the same write. The
// next step is planned only once that write is durable (AwaitDurable in
// agent_results.cc asks the store to sync it in the background, and
// StartDurable picks the workflow up when it is), so a step's result is
// durable before the next step starts, and so is the next step's sent mark,
// which rides in the same write; a step not marked yet is marked in a write
// of its own first. The loop sends everything else meanwhile. That plan is
// made from the state the agent wrote (WorkflowMemo) while no cancel was
// written since it last read the workflow (Store::CancelCount), else from
// the store: what the store holds is then the state the agent wrote, so
// the read is saved (with its decoding and copies) on every step of a
// workflow nobody cancels.

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/agent_impl.h"
#include "base/status_macros.h"
#include "lib/crash_points.h"

namespace outbox {

absl::StatusOr<std::optional<WorkflowRecord>> AgentImpl::ReadWorkflowRecord(
    const std::string& id) {
  absl::StatusOr<WorkflowRecord> record = store_->GetWorkflow(id);
  if (absl::IsNotFound(record.status())) return std::nullopt;
  if (!record.ok()) return record.status();
  return *std::move(record);
}

absl::StatusOr<AgentImpl::WorkflowStart> AgentImpl::TryWorkflowEvent(
    PendingEvent* event, absl::Time now) {
  // Counted before the read: a cancel the read may miss raises it.
  const uint64_t cancels = store_->CancelCount();
  OUTBOX_ASSIGN_OR_RETURN(std::optional<WorkflowRecord> record,
                          ReadWorkflowRecord(event->id));
  const WorkflowRecord* stored = record.has_value() ? &*record : nullptr;
  absl::StatusOr<WorkflowRun> run = definitions_.RunFor(*event, stored);
  if (!run.ok()) {
    HoldWorkflowType(event->type, *event, run.status());
    return WorkflowStart::kHeld;
  }
  if (run->spec == nullptr) return WorkflowStart::kPlain;
  // A stored definition may name destinations the configuration no longer
  // has: they are probed and paused like the others.
  for (const std::string& name : definitions_.TakeNewDestinations()) {
    reachability_.Add(name);
  }
  WorkflowAction action = PlanStored(*run, *event, stored, now);
  const PlanBasis basis{stored != nullptr && stored->cancelled, cancels};
  return StartWorkflowEvent(std::move(*event), *run, std::move(action), basis,
                            now)
             ? WorkflowStart::kTaken
             : WorkflowStart::kFull;
}

WorkflowAction AgentImpl::PlanStored(const WorkflowRun& run,
                                     const PendingEvent& event,
                                     const WorkflowRecord* record,
                                     absl::Time now) {
  const workflow::WorkflowSpec& spec = *run.spec;
  WorkflowAction action = PlanWorkflow(spec, *run.config, event, record, now);
  if (!test_.skip_in_doubt_resend || !action.resend) return action;
  // Broken on purpose: the step in doubt is passed over, as if it had
  // never been sent (what compensation did before the resend).
  storage::WorkflowStepState* s =
      action.state.mutable_steps(static_cast<int>(action.step));
  s->set_status(storage::STEP_STATUS_UNSPECIFIED);
  s->set_sent(false);
  WorkflowRecord broken = *record;
  broken.state = action.state.SerializeAsString();
  return PlanWorkflow(spec, *run.config, event, &broken, now);
}

AgentImpl::WorkflowStart AgentImpl::StartFromMemo(PendingEvent event,
                                                  WorkflowMemo memo,
                                                  absl::Time now) {
  WorkflowAction action = PlanWorkflowFrom(*memo.run.spec, *memo.run.config,
                                           event, std::move(memo.state), now);
  return StartWorkflowEvent(std::move(event), memo.run, std::move(action),
                            PlanBasis{false, memo.cancels}, now)
             ? WorkflowStart::kTaken
             : WorkflowStart::kFull;
}

void AgentImpl::Memo(const Settlement& s, storage::WorkflowState state,
                     const WorkflowRun& run, const PlanBasis& basis) {
  // Only a forward step marked next: every other path (compensation, a
  // cancel seen) is planned from the store, as before.
  if (basis.saw_cancel || s.kind != Settlement::Kind::kStepDone ||
      s.workflow_marked_step < 0) {
    return;
  }
  memos_.insert_or_assign(s.event.seq,
                          WorkflowMemo{std::move(state), run, basis.cancels});
}

void AgentImpl::HoldWorkflowType(const std::string& type,
                                 const PendingEvent& event,
                                 const absl::Status& why) {
  if (!held_workflow_types_.insert(type).second) return;
  Log(LogSeverity::kError, LogEvent::kWorkflowHeld,
      absl::StrCat(why.message(),
                   "; every event of its type is held (none "
                   "is sent or dead-lettered) until the "
                   "agent is reloaded or restarted"),
      event.id);
}

bool AgentImpl::StartWorkflowEvent(PendingEvent event, const WorkflowRun& run,
                                   WorkflowAction action,
                                   const PlanBasis& basis, absl::Time now) {
  const workflow::WorkflowSpec& spec = *run.spec;
  const AgentConfig& config = *run.config;
  // Every state this writes names run's definition: kept with the first.
  auto settle = [&](Settlement s) {
    definitions_.Attach(run, &s);
    settled_.push_back(std::move(s));
  };
  if (action.kind == WorkflowAction::Kind::kSettle) {
    settle(FinalSettlement(action, std::move(event)));
    return true;
  }
  auto not_done = not_done_steps_.find(event.id);
  if (action.resend && not_done != not_done_steps_.end() &&
      not_done->second == action.step) {
    // Known not to have taken effect (not_done_steps_): compensation goes
    // on without it, once that is durable (a cut would leave it in doubt).
    not_done_steps_.erase(not_done);
    settle(NotDoneSettlement(action, std::move(event)));
    return true;
  }
  if (HeldForItsDestination(action, event, basis.saw_cancel)) return true;
  if (action.kind == WorkflowAction::Kind::kMark) {
    // The step's sent mark must be durable before the request can leave:
    // this round's settle batch writes it (with every other mark of the
    // round, one sync for all), and once that is durable StartDurable plans
    // it again (seeing any cancel written since) before it sends.
    storage::WorkflowState written;
    Settlement s =
        MarkSettlement(std::move(action), std::move(event), &written);
    Memo(s, std::move(written), run, basis);
    settle(std::move(s));
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
    settle(WorkflowSettlement(action, spec, d, HttpResult(), std::move(event),
                              config, now));
    return true;
  }
  ++stats_.requests;
  const bool was_not_done = not_done != not_done_steps_.end() &&
                            not_done->second == action.step && !action.revert;
  if (was_not_done) not_done_steps_.erase(not_done);  // it may take effect now
  const Destination* destination = action.destination;
  const bool probe = reachability_.OnSend(destination->name);
  if (probe) workflow_probes_.erase(destination->name);
  in_flight_seqs_.insert(event.seq);
  auto flight = std::make_unique<WorkflowFlight>();
  flight->run = run;
  flight->action = std::move(action);
  flight->basis = basis;
  flight->was_not_done = was_not_done;
  in_flight_.emplace(
      tag,
      InFlight{std::move(event), destination, probe, std::move(flight), {}});
  return true;
}

absl::Status AgentImpl::StartDurable(absl::Time now) {
  if (awaiting_durable_.empty()) return absl::OkStatus();
  const uint64_t durable = store_->DurableMark();
  const size_t max = static_cast<size_t>(config_.agent.max_in_flight);
  while (!awaiting_durable_.empty() && in_flight_.size() < max &&
         awaiting_durable_.front().mark <= durable) {
    Awaiting next = std::move(awaiting_durable_.front());
    awaiting_durable_.pop_front();
    awaiting_seqs_.erase(next.event.seq);
    if (held_workflow_types_.contains(next.event.type)) continue;  // NextDue's
    // Planned from what is stored when a cancel may have come meanwhile;
    // else from what this agent wrote, which the store holds.
    absl::StatusOr<WorkflowStart> started = WorkflowStart::kFull;
    if (next.memo.has_value() && next.memo->cancels == store_->CancelCount()) {
      started =
          StartFromMemo(std::move(next.event), *std::move(next.memo), now);
    } else {
      started = TryWorkflowEvent(&next.event, now);
    }
    if (!started.ok()) return PauseIfDiskFull(started.status());
    // Full: it is due in the store; NextDue gives it again. Plain (its
    // workflow ended under a definition since dropped): NextDue routes it.
    if (*started == WorkflowStart::kFull) break;
  }
  return absl::OkStatus();
}

LaneGate AgentImpl::WorkflowGate(const Lane& lane, absl::Time steady) {
  // (A target a reload left unknown: planned again, which tracks it.)
  if (!lane.target.empty() && reachability_.Knows(lane.target)) {
    const LaneGate g = reachability_.Gate(lane.target, steady, &probing_);
    if (g == LaneGate::kOne) workflow_probes_.insert(std::string(lane.target));
    return g;
  }
  // Peeked, not given: the plan says which destination's probe (if any)
  // one of its events takes (MayStartWorkflowRequest). With no destination
  // known (its stored definitions not loaded yet) it is open: the plan
  // loads them.
  bool known = false;
  auto may_take = [&](absl::string_view name) {
    known = true;
    return reachability_.Peek(name, steady, probing_) != LaneGate::kClosed;
  };
  for (const workflow::WorkflowSpec* spec : definitions_.SpecsOf(lane.type)) {
    for (const workflow::StepSpec& step : spec->steps) {
      for (const workflow::TargetSpec& target : step.targets) {
        if (may_take(target.choice.destination)) return LaneGate::kOpen;
      }
    }
  }
  if (WorkflowFor(config_, lane.type, "") == nullptr) {
    // Its events not started yet are plain ones now.
    absl::StatusOr<const Destination*> plain = Route(config_, lane.type, "");
    if (plain.ok() && may_take((*plain)->name)) return LaneGate::kOpen;
  }
  return known ? LaneGate::kClosed : LaneGate::kOpen;
}

bool AgentImpl::HeldForItsDestination(const WorkflowAction& action,
                                      const PendingEvent& event,
                                      bool saw_cancel) {
  if (action.destination == nullptr ||
      MayStartWorkflowRequest(action.destination->name)) {
    return false;
  }
  // Nothing is sent or written (a first step is not even marked, so a
  // cancel meanwhile sends nothing): the event waits in its destination's
  // lane, one gate call a round until it opens, while other workflows and
  // compensations elsewhere go on. It is planned again then, from what is
  // stored.
  store_->Relane(event, action.destination->name, saw_cancel);
  return true;
}

bool AgentImpl::MayStartWorkflowRequest(absl::string_view destination) {
  switch (reachability_.Gate(destination, Steady(), &probing_)) {
    case LaneGate::kOpen:
      return true;
    case LaneGate::kOne:  // its probe, claimed now (a mark first, maybe)
      workflow_probes_.insert(std::string(destination));
      return true;
    case LaneGate::kClosed:
      break;
  }
  // Given to a workflow lane this round, or claimed by a plan whose step
  // was marked first: not sent yet (sending it erases it).
  return workflow_probes_.contains(destination);
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
  WorkflowFlight& w = *flight.workflow;
  // The receiver may have acted on it: a power cut before its result is
  // written means the same request again, with the same id.
  internal::CrashPoint(w.action.revert ? internal::kWorkflowRevertAfterAnswer
                                       : internal::kWorkflowStepAfterAnswer);
  storage::WorkflowState written;
  Settlement s =
      WorkflowSettlement(std::move(w.action), *w.run.spec, d, result,
                         std::move(flight.event), *w.run.config, now, &written);
  definitions_.Attach(w.run, &s);
  Memo(s, std::move(written), w.run, w.basis);
  return s;
}

void AgentImpl::LogWorkflowSettlement(const Settlement& s) {
  if (s.workflow_state.empty()) return;
  // The phase alone, most of the time: a step's state is decoded only when
  // compensation may just have begun.
  storage::WorkflowState state;
  switch (SettledPhase(s)) {
    case storage::WORKFLOW_PHASE_COMPENSATING:
      if (s.kind == Settlement::Kind::kStepDone &&
          state.ParseFromString(s.workflow_state) &&
          state.next_revert() == state.steps_size() - 1) {
        Log(LogSeverity::kWarning, LogEvent::kWorkflowCompensating,
            absl::StrCat("workflow of event ", s.event.id,
                         ": reverting its completed steps, last first (",
                         state.cause(), ")"),
            s.event.id);
      }
      break;
    case storage::WORKFLOW_PHASE_NEEDS_ATTENTION:
      metrics_.counts().OnWorkflowFinished(
          AgentMetrics::WorkflowEnd::kNeedsAttention);
      Log(LogSeverity::kError, LogEvent::kWorkflowNeedsAttention,
          absl::StrCat("workflow of event ", s.event.id, ": ", s.reason,
                       "; nothing more runs until outboxctl retry-step"),
          s.event.id);
      break;
    case storage::WORKFLOW_PHASE_COMPLETED:
      if (s.kind == Settlement::Kind::kDelivered) {
        metrics_.counts().OnWorkflowFinished(
            AgentMetrics::WorkflowEnd::kCompleted);
      }
      break;
    case storage::WORKFLOW_PHASE_COMPENSATED:
      metrics_.counts().OnWorkflowFinished(
          AgentMetrics::WorkflowEnd::kCompensated);
      break;
    default:
      break;
  }
}

}  // namespace outbox
