// Copyright (c) edge-outbox authors.
//
// Workflow definitions as the store keeps them. A workflow runs to its end
// under the definition it started with (DBOS's application versions and
// Temporal's worker versioning are the anchors), so the store keeps a copy
// of each definition a workflow started under, and a later configuration
// that drops or renames the workflow, or a destination one of its steps
// took, changes nothing for the workflows already running.
//
// A definition is a small configuration text (outbox.config.AgentConfig in
// text format): the workflow as configured, every destination it names,
// with paths resolved to absolute ones, and the top-level retry schedule.
// Its id is a hash of that text, so equal definitions are one row. No
// credential is in it: secrets_file, header_files and TLS files are paths,
// read again when a definition is loaded; an inline header named like a
// credential (Authorization, Cookie, X-Api-Key, *-Token...) is left out of
// the copy, and a proxy URL is kept without its user:password@ (a copy
// serves only once the configuration has dropped its destination). A definition
// no stored workflow names any more, and the configuration does not have, is
// deleted (Store::PurgeWorkflowDefinitions, at the agent's housekeeping).
//
// A loaded definition takes each destination it names from the running
// configuration when a destination of that name (and kind) is configured,
// so a moved server or a rotated secret applies to running workflows too;
// only a destination no longer configured comes from the stored copy.

#ifndef OUTBOX_AGENT_CONFIG_DEFINITION_H_
#define OUTBOX_AGENT_CONFIG_DEFINITION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/config/config.h"

namespace outbox {

// The id of the definition `text`: "wd1-" and 32 hex digits of its SHA-256.
std::string WorkflowDefinitionId(absl::string_view text);

// The event type of the definition `text`, read without validating it, or
// "" when it does not parse or holds no workflow (the agent then never
// dispatches on it).
std::string WorkflowDefinitionType(absl::string_view text);

// Loads the stored definition `text` (id `id`) against the running
// configuration `current`: a configuration of one workflow, the
// destinations its steps may take (current ones where configured, see
// above), and `current`'s agent settings and retry schedule.
// Errors: kDataLoss when `text` does not parse, holds other than one
// workflow, or its id is not `id` (the row is damaged); the errors of
// ParseAgentConfig for a stored destination (a secrets file since removed:
// kNotFound), each naming the definition.
absl::StatusOr<AgentConfig> LoadWorkflowDefinition(absl::string_view id,
                                                   absl::string_view text,
                                                   const AgentConfig& current);

}  // namespace outbox

#endif  // OUTBOX_AGENT_CONFIG_DEFINITION_H_
