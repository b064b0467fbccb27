// Copyright (c) edge-outbox authors.
//
// The workflow engine's decisions, as pure functions (no I/O, no clock
// reads), so that every path can be tested without sockets:
//   PlanWorkflow        what a due workflow event needs next: a step's
//                       request, a revert's, or to leave the queue;
//   WorkflowSettlement  what the store records once that request answered.
// The agent (agent_workflow.cc) sends what the plan says and settles what
// the answer gives. Both carry the whole new WorkflowState, so the queue
// and the workflow change in one write.
//
// The engine's rules (docs/workflows.md):
//   - Steps run one at a time, in order. A step's request carries its own
//     webhook-id (workflow::StepRequestId), the same on every resend.
//   - A step's 2xx result is settled kStepDone, and the next step is
//     planned only once that write is durable: after a power cut the
//     workflow resumes at the first step without a stored result.
//   - A step that is dead-lettered (its destination's retry schedule
//     exhausted, a 4xx) or cannot be built (a payload member missing, a
//     condition over a document that is not JSON) starts compensation: the
//     completed steps are reverted, last first, each with its own retries.
//     Steps without a revert are skipped.
//   - A cancel (Txn::Cancel) seen before a step is planned starts the same
//     compensation; no forward step is planned after it began.
//   - A revert that fails for good (its destination's schedule or its own
//     max_attempts spent, a 4xx), or cannot be built, leaves the workflow
//     NEEDS_ATTENTION: dead-lettered, nothing more runs.
//   - A step is sent only once a durable "sent" mark says it may have gone
//     out (WorkflowStepState.sent), and only by a plan made after that
//     mark was durable that sees every cancel recorded before the mark
//     (whose mark the store drops): one that read the workflow back, or
//     one made from the state the agent wrote (PlanWorkflowFrom) while no
//     cancel was written since its last read (Store::CancelCount). So a
//     step with no mark never went out. Step k+1's mark rides in the
//     synced write that settles step k's 2xx (no extra write); the first
//     step (and one after a step-level resume) gets a kMark action: its own
//     synced write, in the round's one Settle batch, the send once it is
//     synced.
//   - A step with the mark and no outcome when compensation begins (a retry
//     pending after a lost answer, a power cut before its 2xx was written),
//     or one whose retries ran out without any answer, is IN_DOUBT: before
//     any revert, it is resent under its same webhook-id (a deduplicating
//     receiver answers it again). A 2xx makes it done, reverted first; a
//     rejection not done; retries running out with no answer leave the
//     workflow NEEDS_ATTENTION (nobody knows whether it happened).

#ifndef OUTBOX_AGENT_WORKFLOW_PLAN_H_
#define OUTBOX_AGENT_WORKFLOW_PLAN_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/config/config.h"
#include "agent/config/workflows.h"
#include "agent/decision.h"
#include "outbox/http_transport.h"
#include "outbox/store.h"
#include "proto/storage.pb.h"

namespace outbox {

// What a workflow event needs next. Plain data.
struct WorkflowAction {
  enum class Kind {
    kSend,    // send `request` (a step's, or a revert's when `revert`)
    kSettle,  // nothing to send: settle as `settle` (the workflow ended)
    kMark,    // write `state` (step `step` marked sent) durably, then plan
              // again: MarkSettlement
  };
  Kind kind = Kind::kSend;
  // The state once the decisions made without sending are applied (skipped
  // steps, compensation begun); results not yet counted in it.
  storage::WorkflowState state;
  // Result rows for those decisions (skips), not yet numbered.
  std::vector<storage::StepResult> rows;

  // kSend:
  bool revert = false;
  // A step in doubt resent during compensation (revert false): its answer
  // decides whether it is reverted, and no forward step follows it.
  bool resend = false;
  size_t step = 0;  // index in the spec and in state.steps (kMark too)
  const Destination* destination = nullptr;  // borrowed from the config
  std::string request_id;
  std::string method;
  std::string url;
  std::string body;
  // For a revert: its own attempt budget (Revert.max_attempts); 0: none.
  int max_attempts = 0;

  // kSettle: kDelivered (completed, or a cancel compensated) or
  // kDeadLetterUnsent (compensated after a failure, or needs attention).
  Settlement::Kind settle = Settlement::Kind::kDelivered;
  std::string reason;
};

// Decides what `event`'s workflow `spec` needs next, from its stored
// `record` (null: nothing stored yet) at wall time `now`. Never fails: what
// cannot be built becomes a failed step (or revert) in the plan.
WorkflowAction PlanWorkflow(const workflow::WorkflowSpec& spec,
                            const AgentConfig& config,
                            const PendingEvent& event,
                            const WorkflowRecord* record, absl::Time now);

// As PlanWorkflow, from `state`, the workflow's state as the agent itself
// last wrote it (the state WorkflowSettlement or MarkSettlement gave), with
// no cancel recorded: what a plan from the store would see while
// Store::CancelCount() has not changed since the agent last read it, so the
// agent need not read it back (AgentImpl::StartDurable).
WorkflowAction PlanWorkflowFrom(const workflow::WorkflowSpec& spec,
                                const AgentConfig& config,
                                const PendingEvent& event,
                                storage::WorkflowState state, absl::Time now);

// The settlement of `action` (a kSend) once `result` came back and Decide()
// made `decision` of it (not kOffline), at wall time `now`; `event` as sent.
// A forward step's 2xx also marks the step planned after it as sent (the
// write is synced before that step is planned again and sent). `written`,
// unless null, receives the state the settlement writes, decoded (for
// PlanWorkflowFrom).
Settlement WorkflowSettlement(WorkflowAction action,
                              const workflow::WorkflowSpec& spec,
                              const Decision& decision,
                              const HttpResult& result, PendingEvent event,
                              const AgentConfig& config, absl::Time now,
                              storage::WorkflowState* written = nullptr);

// The settlement of a kMark action: the state with the step's mark, the
// event due again at once (kStepDone, so the agent syncs it before the next
// plan). `written` as for WorkflowSettlement.
Settlement MarkSettlement(WorkflowAction action, PendingEvent event,
                          storage::WorkflowState* written = nullptr);

// For a resend (`action.resend`) of a step known not to have taken effect
// (never sent, or refused by its receiver):
// the state with that step unmarked and not in doubt, to be written
// (synced, like a mark) before compensation goes on without it.
Settlement NotDoneSettlement(const WorkflowAction& action, PendingEvent event);

// Whether `s`, a kStepDone settlement made by WorkflowSettlement, records a
// revert's answer (else a step's).
bool SettlesRevert(const Settlement& s);
// Whether `s` only writes a sent mark, or drops one (MarkSettlement,
// NotDoneSettlement): no answer in it.
bool SettlesMarkOnly(const Settlement& s);
// The phase of the state `s` writes (UNSPECIFIED: none, or undecodable),
// read without decoding the rest of it.
storage::WorkflowPhase SettledPhase(const Settlement& s);

// `event` as the store keeps it once a kStepDone settlement of it is written
// at wall time `now`: the same entry, due at once, with a fresh retry budget
// for its next request (what NextDue would give back).
PendingEvent RequeuedAfterStepDone(PendingEvent event, absl::Time now);

// The settlement of a kSettle action, or of the decisions a kSend action
// made before sending when nothing can be sent. `event` as NextDue gave it.
Settlement FinalSettlement(const WorkflowAction& action, PendingEvent event);

// The HTTP request for a kSend `action` of `event` at `now`: the
// destination's headers, signature and timeouts, the step's own webhook-id
// and Idempotency-Key, and room for the answer's body.
HttpRequest BuildWorkflowRequest(const WorkflowAction& action,
                                 const PendingEvent& event,
                                 const AgentSettings& settings, absl::Time now,
                                 uint64_t tag);

}  // namespace outbox

#endif  // OUTBOX_AGENT_WORKFLOW_PLAN_H_
