// Copyright (c) edge-outbox authors.
//
// The `classes` of the configuration file: outbox::EventClass values for
// whoever opens the store from this file (a store option: the commit
// enforces them). Checked here with the store's own rules
// (lib/event_classes.h), so an error names the file and line.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/config/internal.h"
#include "base/status_macros.h"
#include "lib/event_classes.h"
#include "proto/agent_config.pb.h"

namespace outbox::config_internal {
namespace {

absl::Status ParseClass(const Checker& c, const Node& node, EventClass* out) {
  const auto& in = static_cast<const config::EventClass&>(*node.message);
  out->name = in.name();
  out->event_types.assign(in.event_types().begin(), in.event_types().end());
  out->priority = in.priority();
  if (in.max_pending_events() < 0 || in.max_pending_bytes() < 0) {
    return c.Error(node,
                   in.max_pending_events() < 0 ? "max_pending_events"
                                               : "max_pending_bytes",
                   -1, "must be >= 0 (0: the class has no limit of its own)");
  }
  out->max_pending_events = static_cast<uint64_t>(in.max_pending_events());
  out->max_pending_bytes = static_cast<uint64_t>(in.max_pending_bytes());
  if (in.on_full() == "drop_oldest") {
    out->on_full = EventClass::OnFull::kDropOldest;
  } else if (!in.on_full().empty() && in.on_full() != "reject") {
    return c.Error(node, "on_full", -1,
                   absl::StrCat("must be \"reject\" or \"drop_oldest\", got \"",
                                in.on_full(), "\""));
  }
  out->evictable = in.evictable();
  out->fiscal = in.fiscal();
  out->keep_evicted = !in.has_keep_evicted() || in.keep_evicted();
  OUTBOX_RETURN_IF_ERROR(c.Duration(
      node, "expire_after", Checker::Bound::kNonNegative, &out->expire_after));
  // The store's checks, one class at a time, so the error has its line.
  absl::StatusOr<EventClasses> alone = EventClasses::Make({*out});
  if (!alone.ok()) return c.Error(node, "", -1, alone.status().message());
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseClasses(const Checker& c, const Node& root,
                          const std::vector<workflow::WorkflowSpec>& workflows,
                          std::vector<EventClass>* classes) {
  const auto& in = static_cast<const config::AgentConfig&>(*root.message);
  for (int i = 0; i < in.classes_size(); ++i) {
    const Node node = c.Child(root, "classes", i);
    EventClass klass;
    OUTBOX_RETURN_IF_ERROR(ParseClass(c, node, &klass));
    classes->push_back(std::move(klass));
    // Names and patterns unique among the classes so far.
    absl::StatusOr<EventClasses> all = EventClasses::Make(*classes);
    if (!all.ok()) return c.Error(node, "", -1, all.status().message());
  }
  if (classes->empty()) return absl::OkStatus();
  // A workflow's event carries its state from step to step; giving it up
  // half-way would leave its compensation undone.
  OUTBOX_ASSIGN_OR_RETURN(const EventClasses all, EventClasses::Make(*classes));
  for (const workflow::WorkflowSpec& w : workflows) {
    const uint16_t id = all.Classify(w.event_type);
    if (id != EventClasses::kNone && all.Get(id)->evictable) {
      return c.Error(c.Child(root, "classes", id - 1), "evictable", -1,
                     absl::StrCat("the workflow of \"", w.event_type,
                                  "\" is in this class; a workflow's events "
                                  "are never evicted nor expired"));
    }
  }
  return absl::OkStatus();
}

}  // namespace outbox::config_internal

namespace outbox {

absl::Status CheckWorkflowsNotEvictable(
    const std::vector<EventClass>& classes,
    const std::vector<workflow::WorkflowSpec>& workflows) {
  if (classes.empty() || workflows.empty()) return absl::OkStatus();
  OUTBOX_ASSIGN_OR_RETURN(const EventClasses all, EventClasses::Make(classes));
  for (const workflow::WorkflowSpec& w : workflows) {
    const uint16_t id = all.Classify(w.event_type);
    if (id == EventClasses::kNone || !all.Get(id)->evictable) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        "the workflow of \"", w.event_type, "\" is in the store's class ",
        all.Get(id)->name,
        ", which is evictable: a workflow's events are never evicted nor "
        "expired (its compensation would never run); put its event type in "
        "a class that is not evictable, in the classes the store is opened "
        "with (Options::event_classes)"));
  }
  return absl::OkStatus();
}

}  // namespace outbox
