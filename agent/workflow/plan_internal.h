// Copyright (c) edge-outbox authors.
//
// What workflow/plan.cc (planning) and workflow/settle.cc (settling an
// answer) share. Internal to the agent; pure functions, no I/O.

#ifndef OUTBOX_AGENT_WORKFLOW_PLAN_INTERNAL_H_
#define OUTBOX_AGENT_WORKFLOW_PLAN_INTERNAL_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "agent/workflow/plan.h"

namespace outbox::internal {

inline int64_t Millis(absl::Time t) { return absl::ToUnixMillis(t); }

// Turns `state` to compensation for `cause`. A step that may have gone out
// without an outcome (marked sent, not answered) becomes IN_DOUBT: it is
// resent before any revert.
void BeginCompensation(storage::WorkflowState* state, std::string cause,
                       bool cancelled);

// Ends the workflow in `a` (kSettle) at `phase`.
void Finish(WorkflowAction* a, storage::WorkflowPhase phase,
            Settlement::Kind settle, std::string reason, absl::Time now);

// Plans the next forward step into `a` from `a->state` (kSend, or kMark
// when the step has no durable sent mark yet; kSettle once all are done),
// or returns false when compensation must begin (then `a->state` says why).
bool PlanForward(const workflow::WorkflowSpec& spec, const AgentConfig& config,
                 const PendingEvent& event, absl::Time now, WorkflowAction* a);

}  // namespace outbox::internal

#endif  // OUTBOX_AGENT_WORKFLOW_PLAN_INTERNAL_H_
