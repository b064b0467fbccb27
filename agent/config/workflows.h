// Copyright (c) edge-outbox authors.
//
// A workflow as configured and validated (outbox.config.Workflow, parsed by
// agent/config/workflows.cc): an event type, its ordered steps, each with the
// destinations it may take and how each is reverted. Plain data: safe for
// concurrent reads.

#ifndef OUTBOX_AGENT_CONFIG_WORKFLOWS_H_
#define OUTBOX_AGENT_CONFIG_WORKFLOWS_H_

#include <optional>
#include <string>
#include <vector>

#include "agent/expr/condition.h"
#include "agent/expr/template.h"

namespace outbox::workflow {

struct RevertSpec {
  Template url;  // Template::Kind::kUrl, absolute (resolved at load)
  std::string method = "POST";
  std::optional<Template> payload;  // kPayload; none: an empty body
  // Attempts before the workflow needs attention; 0: the destination's
  // retry schedule alone decides.
  int max_attempts = 0;
};

// One destination a step may take: Choice::destination names an entry of
// AgentConfig::destinations; its conditions say when.
struct TargetSpec {
  Choice choice;
  std::optional<RevertSpec> revert;  // none: nothing to undo
};

struct StepSpec {
  std::string name;  // [A-Za-z0-9_.-]{1,64}, unique in its workflow
  std::string method = "POST";
  // In order; the first whose conditions hold is taken. A step with one
  // fixed destination has one target without conditions.
  std::vector<TargetSpec> targets;
  // When no target's conditions hold: skip the step (true) or fail it.
  bool skip_on_no_match = false;
  // Whether a reference reads this step's answer (a later step's condition,
  // URL or payload, an extract, or a revert template, its own included):
  // only then is the answer stored (workflow rows). Set at load.
  bool keep_answer = false;
};

struct WorkflowSpec {
  std::string event_type;  // exact
  // The event's payload is a JSON object with one member per step name.
  bool per_step_payloads = false;
  std::vector<StepSpec> steps;  // 1..kMaxSteps
  // The definition as the store keeps it for the workflows that start under
  // it, and its id (agent/config/definition.h): equal texts, one id.
  std::string definition;
  std::string definition_id;
};

inline constexpr int kMaxSteps = 32;

}  // namespace outbox::workflow

#endif  // OUTBOX_AGENT_CONFIG_WORKFLOWS_H_
