// Copyright (c) edge-outbox authors.
//
// The `workflows` of the agent's configuration, checked into
// workflow::WorkflowSpec: names, destinations, conditions, revert templates,
// and that every response: reference names a step that runs earlier (or,
// in a revert, the step itself), so a workflow cannot wait on an answer it
// never gets.

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/config/internal.h"
#include "base/status_macros.h"
#include "proto/agent_config.pb.h"

namespace outbox::config_internal {
namespace {

using workflow::Condition;
using workflow::RevertSpec;
using workflow::StepSpec;
using workflow::TargetSpec;
using workflow::Template;
using workflow::WorkflowSpec;

// Steps a response: reference may name: the earlier ones (and, for a revert,
// the step itself).
using Known = absl::flat_hash_set<std::string>;

absl::Status CheckRef(const Checker& c, const Node& node,
                      absl::string_view field, const workflow::ValueRef& ref,
                      const Known& known) {
  if (ref.source == workflow::ValueRef::Source::kResponse &&
      !known.contains(ref.step)) {
    return c.Error(node, field, -1,
                   absl::StrCat("\"", ref.text, "\" reads step \"", ref.step,
                                "\", which does not run before this point"));
  }
  return absl::OkStatus();
}

absl::Status ParseCondition(const Checker& c, const Node& node,
                            const Known& known, Condition* out) {
  const auto& in = static_cast<const config::Condition&>(*node.message);
  absl::StatusOr<workflow::ValueRef> ref = workflow::ParseValueRef(in.value());
  if (!ref.ok()) return c.Wrap(node, "value", ref.status());
  OUTBOX_RETURN_IF_ERROR(CheckRef(c, node, "value", *ref, known));
  out->ref = *std::move(ref);
  absl::StatusOr<workflow::Operator> op = workflow::ParseOperator(in.op());
  if (!op.ok()) return c.Wrap(node, "op", op.status());
  out->op = *op;
  if (out->op == workflow::Operator::kExists) {
    if (!in.expected().empty()) {
      return c.Error(node, "expected", -1, "must be empty for op \"exists\"");
    }
    return absl::OkStatus();
  }
  out->expected = nlohmann::json::parse(in.expected(), nullptr,
                                        /*allow_exceptions=*/false);
  if (out->expected.is_discarded()) {
    return c.Error(node, "expected", -1,
                   absl::StrCat("\"", absl::CEscape(in.expected()),
                                "\" is not JSON (a string is written "
                                "\\\"quoted\\\")"));
  }
  return absl::OkStatus();
}

absl::Status CheckMethod(const Checker& c, const Node& node,
                         absl::string_view field, const std::string& method,
                         bool allow_delete, std::string* out) {
  if (method.empty()) return absl::OkStatus();  // the default, POST
  if (method == "POST" || method == "PUT" || method == "PATCH" ||
      (allow_delete && method == "DELETE")) {
    *out = method;
    return absl::OkStatus();
  }
  return c.Error(node, field, -1,
                 absl::StrCat("\"", absl::CEscape(method), "\" is not ",
                              allow_delete ? "POST, PUT, PATCH or DELETE"
                                           : "POST, PUT or PATCH"));
}

absl::StatusOr<Template> ParseTemplateField(const Checker& c, const Node& node,
                                            absl::string_view field,
                                            const std::string& text,
                                            Template::Kind kind,
                                            const Known& known) {
  absl::StatusOr<Template> t = workflow::ParseTemplate(text, kind);
  if (!t.ok()) return c.Wrap(node, field, t.status());
  for (const workflow::ValueRef* ref : workflow::References(*t)) {
    OUTBOX_RETURN_IF_ERROR(CheckRef(c, node, field, *ref, known));
  }
  return t;
}

absl::Status ParseRevert(const Checker& c, const Node& node, const Known& known,
                         std::optional<RevertSpec>* out) {
  const auto& in = static_cast<const config::Revert&>(*node.message);
  if (!absl::StartsWith(in.url(), "http://") &&
      !absl::StartsWith(in.url(), "https://")) {
    return c.Error(node, "url", -1,
                   "is required and must start with http:// or https://");
  }
  RevertSpec revert;
  OUTBOX_ASSIGN_OR_RETURN(revert.url,
                          ParseTemplateField(c, node, "url", in.url(),
                                             Template::Kind::kUrl, known));
  OUTBOX_RETURN_IF_ERROR(
      CheckMethod(c, node, "method", in.method(), true, &revert.method));
  if (!in.payload().empty()) {
    OUTBOX_ASSIGN_OR_RETURN(
        revert.payload, ParseTemplateField(c, node, "payload", in.payload(),
                                           Template::Kind::kPayload, known));
  }
  *out = std::move(revert);
  return absl::OkStatus();
}

absl::Status ParseTarget(const Checker& c, const Node& node,
                         const std::vector<Destination>& destinations,
                         const Known& before, const Known& with_self,
                         TargetSpec* out) {
  const auto& in = static_cast<const config::StepTarget&>(*node.message);
  const auto d = std::find_if(
      destinations.begin(), destinations.end(),
      [&](const Destination& d) { return d.name == in.destination(); });
  if (d == destinations.end()) {
    return c.Error(node, "destination", -1,
                   absl::StrCat("no destination is named \"",
                                absl::CEscape(in.destination()), "\""));
  }
  if (d->kind != Destination::Kind::kHttp) {
    // A step's result is its HTTP answer (status, body), and a revert is a
    // request of its own: a broker's PUBACK or delivery report carries
    // neither.
    return c.Error(node, "destination", -1,
                   absl::StrCat("\"", in.destination(), "\" is ",
                                d->kind == Destination::Kind::kMqtt ? "an MQTT"
                                                                    : "a Kafka",
                                " destination; workflow steps need HTTP ones"));
  }
  out->choice.destination = in.destination();
  for (int i = 0; i < in.when_size(); ++i) {
    Condition& condition = out->choice.conditions.emplace_back();
    OUTBOX_RETURN_IF_ERROR(
        ParseCondition(c, c.Child(node, "when", i), before, &condition));
  }
  if (!in.has_revert()) return absl::OkStatus();  // nothing to undo
  return ParseRevert(c, c.Child(node, "revert", -1), with_self, &out->revert);
}

absl::Status ParseStep(const Checker& c, const Node& node,
                       const std::vector<Destination>& destinations,
                       Known* known, StepSpec* out) {
  const auto& in = static_cast<const config::WorkflowStep&>(*node.message);
  out->name = in.name();
  if (!IsName(out->name)) {
    return c.Error(node, "name", -1,
                   absl::StrCat("\"", absl::CEscape(out->name),
                                "\" is not a name: 1..64 characters of "
                                "[A-Za-z0-9_.-] are required"));
  }
  if (known->contains(out->name)) {
    return c.Error(
        node, "name", -1,
        absl::StrCat("\"", out->name, "\" is already a step of this workflow"));
  }
  OUTBOX_RETURN_IF_ERROR(
      CheckMethod(c, node, "method", in.method(), false, &out->method));
  Known with_self = *known;
  with_self.insert(out->name);
  const bool fixed = !in.destination().empty();
  if (fixed == (in.choose_size() > 0)) {
    return c.Error(node, "destination", -1,
                   "a step needs either `destination` or `choose`, not both");
  }
  if (fixed) {
    // The step itself is its one target: same fields, no conditions.
    config::StepTarget target;
    target.set_destination(in.destination());
    if (in.has_revert()) *target.mutable_revert() = in.revert();
    const Node as_target{&target, node.tree, node.path, node.line};
    OUTBOX_RETURN_IF_ERROR(ParseTarget(c, as_target, destinations, *known,
                                       with_self,
                                       &out->targets.emplace_back()));
  } else if (in.has_revert()) {
    return c.Error(node, "revert", -1,
                   "with `choose`, each target declares its own revert");
  }
  for (int i = 0; i < in.choose_size(); ++i) {
    OUTBOX_RETURN_IF_ERROR(ParseTarget(c, c.Child(node, "choose", i),
                                       destinations, *known, with_self,
                                       &out->targets.emplace_back()));
  }
  known->insert(out->name);
  return absl::OkStatus();
}

absl::Status ParseWorkflow(const Checker& c, const Node& node,
                           const std::vector<Destination>& destinations,
                           WorkflowSpec* out) {
  const auto& in = static_cast<const config::Workflow&>(*node.message);
  out->event_type = in.event_type();
  if (out->event_type.empty() || absl::StrContains(out->event_type, '*')) {
    return c.Error(node, "event_type", -1,
                   "is required: an exact event type (no patterns)");
  }
  if (in.payloads() == "per_step") {
    out->per_step_payloads = true;
  } else if (!in.payloads().empty() && in.payloads() != "whole") {
    return c.Error(node, "payloads", -1,
                   absl::StrCat("must be \"whole\" or \"per_step\", got \"",
                                absl::CEscape(in.payloads()), "\""));
  }
  if (in.steps_size() == 0 || in.steps_size() > workflow::kMaxSteps) {
    return c.Error(node, "steps", -1,
                   absl::StrCat("a workflow has 1..", workflow::kMaxSteps,
                                " steps, this one ", in.steps_size()));
  }
  Known known;
  for (int i = 0; i < in.steps_size(); ++i) {
    OUTBOX_RETURN_IF_ERROR(ParseStep(c, c.Child(node, "steps", i), destinations,
                                     &known, &out->steps.emplace_back()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseWorkflows(const Checker& c, const Node& root,
                            const std::vector<Destination>& destinations,
                            std::vector<WorkflowSpec>* out) {
  const auto& in = static_cast<const config::AgentConfig&>(*root.message);
  absl::flat_hash_map<std::string, int> lines;  // event type -> line
  for (int i = 0; i < in.workflows_size(); ++i) {
    const Node node = c.Child(root, "workflows", i);
    WorkflowSpec spec;
    OUTBOX_RETURN_IF_ERROR(ParseWorkflow(c, node, destinations, &spec));
    const auto [it, inserted] = lines.emplace(spec.event_type, node.line);
    if (!inserted) {
      return c.Error(
          node, "event_type", -1,
          absl::StrCat("\"", spec.event_type,
                       "\" already has a workflow (line ", it->second, ")"));
    }
    out->push_back(std::move(spec));
  }
  return absl::OkStatus();
}

}  // namespace outbox::config_internal
