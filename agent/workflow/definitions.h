// Copyright (c) edge-outbox authors.
//
// Which definition each workflow runs under (agent/config/definition.h):
// the one its stored state names, whatever the configuration says now.
//   - A workflow not started yet starts under the configuration's
//     definition for its type; its first state write keeps that definition
//     in the store (Attach) unless it is stored already.
//   - A workflow whose state names the configuration's definition runs
//     under the configuration.
//   - One whose state names another (the configuration changed since it
//     started) runs under the stored copy, loaded once.
//   - A state written before definitions were kept names none: it runs
//     under the configuration's workflow for its type, or is held when the
//     configuration has none (sending its event as a plain event would skip
//     its remaining steps and never compensate).
// An event of a type no definition has is a plain event.

#ifndef OUTBOX_AGENT_WORKFLOW_DEFINITIONS_H_
#define OUTBOX_AGENT_WORKFLOW_DEFINITIONS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/config/config.h"
#include "agent/config/workflows.h"
#include "outbox/store.h"

namespace outbox {

// A workflow's definition and the configuration its steps run against
// (destinations, agent settings). Both borrowed from WorkflowDefinitions or
// the agent's configuration; spec null: a plain event.
struct WorkflowRun {
  const workflow::WorkflowSpec* spec = nullptr;
  const AgentConfig* config = nullptr;
};

// The definition id a stored workflow state (encoded outbox.storage.
// WorkflowState) names, read without decoding the rest; "" if none or if
// the state does not decode that far.
std::string StoredDefinitionId(absl::string_view state);

class WorkflowDefinitions {
 public:
  // `config`, the running configuration, must outlive this.
  explicit WorkflowDefinitions(const AgentConfig* config) : config_(config) {}

  // Reads the definitions `store` keeps (a few per configuration change,
  // each parsed when a workflow first needs it).
  absl::Status Init(Store* store);

  // Whether an event of `type` naming `explicit_destination` may be a
  // workflow's: its type has a definition, configured or stored. An event
  // with an explicit destination never is.
  bool MayBeWorkflow(absl::string_view type,
                     absl::string_view explicit_destination) const;
  // Whether the agent must read an event's stored workflow to know: as
  // MayBeWorkflow, or, while the store may hold states written before
  // definitions were kept (it held workflow states but no definition when
  // this agent started), any event without an explicit destination: such a
  // state may be of a type no definition names.
  bool MustRead(absl::string_view type,
                absl::string_view explicit_destination) const {
    return MayBeWorkflow(type, explicit_destination) ||
           (legacy_possible_ && explicit_destination.empty());
  }

  // What `event`, with its stored workflow `record` (null: none), runs
  // under. Errors (the event cannot run until the configuration or a file
  // is fixed): kFailedPrecondition for a state that names no definition
  // when the configuration has no workflow for its type; kDataLoss when the
  // definition it names is not stored or damaged; a stored destination's
  // file errors (LoadWorkflowDefinition).
  absl::StatusOr<WorkflowRun> RunFor(const PendingEvent& event,
                                     const WorkflowRecord* record);

  // Every definition of `type` in use so far: the configuration's and the
  // stored ones loaded (for the gate of its lane).
  std::vector<const workflow::WorkflowSpec*> SpecsOf(
      absl::string_view type) const;

  // Sets `s` to keep `run`'s definition when the store does not hold it.
  void Attach(const WorkflowRun& run, Settlement* s) const;
  // `s` was written: the definition it carried is stored.
  void Written(const Settlement& s);

  // The ids of the configuration's definitions.
  std::vector<std::string> ConfiguredIds() const;
  // Whether the store holds a definition the configuration does not have
  // (one Store::PurgeWorkflowDefinitions may delete).
  bool HoldsUnconfigured() const;
  // The store deleted the definitions `ids` (no workflow names them): they
  // are no longer stored, so one that comes back into the configuration is
  // attached again.
  void Forget(const std::vector<std::string>& ids);

  // The destinations the configuration does not have, of the stored
  // definitions loaded since the last call (the agent tracks their
  // reachability); usually none.
  std::vector<std::string> TakeNewDestinations() {
    return std::exchange(new_destinations_, {});
  }

 private:
  struct Stored {
    std::string type;
    std::string text;
    std::unique_ptr<AgentConfig> loaded;  // null until first needed
  };
  absl::StatusOr<WorkflowRun> Load(const std::string& id);

  const AgentConfig* const config_;
  absl::flat_hash_map<std::string, Stored> stored_;  // by id
  absl::flat_hash_set<std::string> stored_types_;
  // The specs of the stored definitions loaded so far, by event type.
  absl::flat_hash_map<std::string, std::vector<const workflow::WorkflowSpec*>>
      loaded_by_type_;
  std::vector<std::string> new_destinations_;
  bool legacy_possible_ = false;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_WORKFLOW_DEFINITIONS_H_
