// Copyright (c) edge-outbox authors.

#include "agent/workflow/definitions.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "agent/config/definition.h"
#include "base/status_macros.h"
#include "lib/proto_peek.h"
#include "proto/storage.pb.h"

namespace outbox {

std::string StoredDefinitionId(absl::string_view state) {
  return PeekBytes(state, storage::WorkflowState::kDefinitionFieldNumber);
}

absl::Status WorkflowDefinitions::Init(Store* store) {
  OUTBOX_ASSIGN_OR_RETURN(auto definitions, store->ListWorkflowDefinitions());
  for (auto& [id, text] : definitions) {
    Stored& s = stored_[id];
    s.type = WorkflowDefinitionType(text);
    s.text = std::move(text);
    if (!s.type.empty()) stored_types_.insert(s.type);
  }
  // A build that keeps definitions stores one with the first state it
  // writes; none stored means every state there (if any) predates them.
  if (stored_.empty()) {
    OUTBOX_ASSIGN_OR_RETURN(legacy_possible_, store->HasWorkflowStates());
  }
  return absl::OkStatus();
}

bool WorkflowDefinitions::MayBeWorkflow(
    absl::string_view type, absl::string_view explicit_destination) const {
  if (!explicit_destination.empty()) return false;
  return stored_types_.contains(type) ||
         WorkflowFor(*config_, type, explicit_destination) != nullptr;
}

absl::StatusOr<WorkflowRun> WorkflowDefinitions::RunFor(
    const PendingEvent& event, const WorkflowRecord* record) {
  const workflow::WorkflowSpec* configured =
      WorkflowFor(*config_, event.type, event.destination);
  const bool has_state = record != nullptr && !record->state.empty();
  const std::string id = has_state ? StoredDefinitionId(record->state) : "";
  if (id.empty()) {
    if (configured != nullptr || !has_state) {
      return WorkflowRun{configured, config_};  // null spec: a plain event
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "the workflow of event ", event.id, " (type \"",
        absl::CEscape(event.type),
        "\") started before its definition was kept in the store, and the "
        "configuration no longer has a workflow for that type: put the "
        "workflow back in the configuration so it can finish"));
  }
  if (configured != nullptr && configured->definition_id == id) {
    return WorkflowRun{configured, config_};
  }
  return Load(id);
}

absl::StatusOr<WorkflowRun> WorkflowDefinitions::Load(const std::string& id) {
  auto it = stored_.find(id);
  if (it == stored_.end()) {
    return absl::DataLossError(absl::StrCat(
        "a workflow runs under definition ", absl::CEscape(id),
        ", which the store does not hold (outboxctl verify reports it)"));
  }
  Stored& s = it->second;
  if (s.loaded == nullptr) {
    OUTBOX_ASSIGN_OR_RETURN(AgentConfig loaded,
                            LoadWorkflowDefinition(id, s.text, *config_));
    s.loaded = std::make_unique<AgentConfig>(std::move(loaded));
    for (const Destination& d : s.loaded->destinations) {
      if (FindDestination(*config_, d.name) == nullptr) {
        new_destinations_.push_back(d.name);
      }
    }
    loaded_by_type_[s.type].push_back(&s.loaded->workflows[0]);
  }
  return WorkflowRun{&s.loaded->workflows[0], s.loaded.get()};
}

std::vector<const workflow::WorkflowSpec*> WorkflowDefinitions::SpecsOf(
    absl::string_view type) const {
  std::vector<const workflow::WorkflowSpec*> specs;
  if (const workflow::WorkflowSpec* w = WorkflowFor(*config_, type, "")) {
    specs.push_back(w);
  }
  auto loaded = loaded_by_type_.find(type);
  if (loaded != loaded_by_type_.end()) {
    specs.insert(specs.end(), loaded->second.begin(), loaded->second.end());
  }
  return specs;
}

void WorkflowDefinitions::Attach(const WorkflowRun& run, Settlement* s) const {
  if (run.spec == nullptr || run.spec->definition_id.empty() ||
      stored_.contains(run.spec->definition_id)) {
    return;
  }
  s->workflow_definition_id = run.spec->definition_id;
  s->workflow_definition = run.spec->definition;
}

std::vector<std::string> WorkflowDefinitions::ConfiguredIds() const {
  std::vector<std::string> ids;
  for (const workflow::WorkflowSpec& w : config_->workflows) {
    if (!w.definition_id.empty()) ids.push_back(w.definition_id);
  }
  return ids;
}

bool WorkflowDefinitions::HoldsUnconfigured() const {
  const std::vector<std::string> configured = ConfiguredIds();
  const absl::flat_hash_set<std::string> current(configured.begin(),
                                                 configured.end());
  for (const auto& [id, stored] : stored_) {
    if (!current.contains(id)) return true;
  }
  return false;
}

void WorkflowDefinitions::Forget(const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    auto it = stored_.find(id);
    if (it == stored_.end()) continue;
    if (it->second.loaded != nullptr) {
      // Its spec may be listed for its type's lane gate: drop it there.
      std::vector<const workflow::WorkflowSpec*>& specs =
          loaded_by_type_[it->second.type];
      specs.erase(std::remove(specs.begin(), specs.end(),
                              &it->second.loaded->workflows[0]),
                  specs.end());
    }
    stored_.erase(it);
  }
  stored_types_.clear();
  for (const auto& [id, stored] : stored_) {
    if (!stored.type.empty()) stored_types_.insert(stored.type);
  }
}

void WorkflowDefinitions::Written(const Settlement& s) {
  if (s.workflow_definition.empty()) return;
  Stored& stored = stored_[s.workflow_definition_id];
  if (!stored.text.empty()) return;
  stored.text = s.workflow_definition;
  stored.type = WorkflowDefinitionType(stored.text);
  if (!stored.type.empty()) stored_types_.insert(stored.type);
}

}  // namespace outbox
