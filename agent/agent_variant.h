// Copyright (c) edge-outbox authors.
//
// The deliberately broken variants of the agent, and how a test makes an
// agent that runs one: what crash suites include, instead of the loop's own
// header (agent_impl.h).

#ifndef OUTBOX_AGENT_AGENT_VARIANT_H_
#define OUTBOX_AGENT_AGENT_VARIANT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "outbox/agent.h"
#include "outbox/store.h"

namespace outbox {

// Deliberately broken variants of the agent, so that crash suites can prove
// they catch what they claim to (as StoreTestOptions does for the store).
// Never set outside tests.
struct AgentTestOptions {
  // A round that settled a workflow step's (or revert's) result plans the
  // next one without syncing the store first: the next request may leave
  // while the result it follows is only in the unsynced log.
  bool skip_workflow_sync = false;
  // Compensation counts a step in doubt (sent, outcome unknown) as not
  // done: it is neither resent nor reverted, although its receiver may have
  // acted on it (the gap the resend closes).
  bool skip_in_doubt_resend = false;
  // A plain event (not a workflow's; of a batch, only the first) that keeps
  // failing is dead-lettered one attempt before its policy's max_attempts.
  bool give_up_an_attempt_early = false;
};

// Agent::Create, with `test`'s broken variants.
absl::StatusOr<std::unique_ptr<Agent>> CreateAgentForTest(
    Store* store, AgentOptions options, const AgentTestOptions& test);

}  // namespace outbox

#endif  // OUTBOX_AGENT_AGENT_VARIANT_H_
