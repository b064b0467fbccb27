// Copyright (c) edge-outbox authors.
//
// What a parsed configuration answers (config.h): a destination by name, the
// destination an event is routed to, and the workflow its type starts. Pure
// lookups, apart from parsing (config.cc), so that the stored definitions
// (definition.cc), which parsing calls, can use them without a circle.

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/config/config.h"

namespace outbox {

const Destination* FindDestination(const AgentConfig& config,
                                   absl::string_view name) {
  for (const Destination& d : config.destinations) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

const workflow::WorkflowSpec* WorkflowFor(
    const AgentConfig& config, absl::string_view event_type,
    absl::string_view explicit_destination) {
  if (!explicit_destination.empty()) return nullptr;
  for (const workflow::WorkflowSpec& w : config.workflows) {
    if (w.event_type == event_type) return &w;
  }
  return nullptr;
}

absl::StatusOr<const Destination*> Route(
    const AgentConfig& config, absl::string_view event_type,
    absl::string_view explicit_destination) {
  auto find = [&config](absl::string_view name) {
    return FindDestination(config, name);
  };
  if (!explicit_destination.empty()) {
    if (const Destination* d = find(explicit_destination)) return d;
    return absl::NotFoundError(absl::StrCat("the event names destination \"",
                                            absl::CEscape(explicit_destination),
                                            "\", which is not configured"));
  }
  const RouteRule* best = nullptr;
  for (const RouteRule& rule : config.routes) {
    const bool matches = rule.kind == RouteRule::Kind::kAny ||
                         (rule.kind == RouteRule::Kind::kExact &&
                          rule.event_type == event_type) ||
                         (rule.kind == RouteRule::Kind::kPrefix &&
                          absl::StartsWith(event_type, rule.prefix));
    if (!matches) continue;
    // Exact beats prefix beats "*"; among prefixes the longest wins.
    auto rank = [](const RouteRule& r) {
      return r.kind == RouteRule::Kind::kExact    ? std::string::npos
             : r.kind == RouteRule::Kind::kPrefix ? r.prefix.size()
                                                  : 0;
    };
    if (best == nullptr || rank(rule) > rank(*best)) best = &rule;
  }
  if (best != nullptr) {
    if (const Destination* d = find(best->destination)) return d;
  }
  return absl::NotFoundError(absl::StrCat("no route matches event type \"",
                                          absl::CEscape(event_type), "\""));
}

}  // namespace outbox
