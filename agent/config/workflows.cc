// Copyright (c) edge-outbox authors.
//
// The `workflows` of the agent's configuration, checked into
// workflow::WorkflowSpec: names, destinations, conditions, revert templates
// and where they go (agent/expr/revert_url.h), named `extract` values,
// and that every response: reference names a step that runs earlier (or,
// in a revert or an extract, the step itself), so a workflow cannot wait on
// an answer it never gets. "{name}" is resolved here, to the reference its
// extract names: the engine only ever sees references.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/config/internal.h"
#include "agent/expr/revert_url.h"
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

// What a reference or a "{name}" may read at one point of a workflow.
struct Scope {
  // Steps a response: reference may name: the earlier ones (and, for a
  // revert or an extract, the step itself).
  absl::flat_hash_set<std::string> steps;
  // The step "response:<path>" reads (its own answer); empty where that
  // answer does not exist yet (the step's conditions).
  std::string self;
  workflow::NamedValues names;  // "{name}" -> reference
  // A stored definition a workflow started under, loaded again: an absolute
  // revert URL at another origin was accepted then (before other_origin
  // existed), and its compensation must still be able to run; an unset
  // on_no_match meant "skip" then.
  bool stored = false;
  // Steps whose answer a reference reads (a later condition, URL or
  // payload, an extract, a revert): their answers are kept (keep_answer).
  // Shared by every copy of the scope of one workflow.
  absl::flat_hash_set<std::string>* answers_read = nullptr;
};

// Binds "response:<path>" to the step itself and checks that `ref` reads
// an answer that exists at this point.
absl::Status CheckRef(const Checker& c, const Node& node,
                      absl::string_view field, workflow::ValueRef* ref,
                      const Scope& scope) {
  if (ref->source != workflow::ValueRef::Source::kResponse) {
    return absl::OkStatus();
  }
  if (ref->step.empty() && scope.self.empty()) {
    return c.Error(node, field, -1,
                   absl::StrCat("\"", ref->text,
                                "\" reads this step's own answer, which only "
                                "its revert and its extract can: write "
                                "response:<step>:<path> for an earlier one"));
  }
  if (ref->step.empty()) ref->step = scope.self;
  if (!scope.steps.contains(ref->step)) {
    return c.Error(node, field, -1,
                   absl::StrCat("\"", ref->text, "\" reads step \"", ref->step,
                                "\", which does not run before this point"));
  }
  if (scope.answers_read != nullptr) scope.answers_read->insert(ref->step);
  return absl::OkStatus();
}

// The named value "{name}" stands for, if `text` is one.
absl::StatusOr<std::optional<workflow::ValueRef>> NamedRef(
    const Checker& c, const Node& node, absl::string_view field,
    absl::string_view text, const Scope& scope) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}' ||
      !workflow::IsValueName(text.substr(1, text.size() - 2))) {
    return std::nullopt;
  }
  auto it = scope.names.find(std::string(text.substr(1, text.size() - 2)));
  if (it == scope.names.end()) {
    return c.Error(node, field, -1,
                   absl::StrCat(text,
                                " is not declared: name it in an earlier "
                                "step's `extract`"));
  }
  return it->second;
}

absl::Status ParseCondition(const Checker& c, const Node& node,
                            const Scope& scope, Condition* out) {
  const auto& in = static_cast<const config::Condition&>(*node.message);
  OUTBOX_ASSIGN_OR_RETURN(std::optional<workflow::ValueRef> named,
                          NamedRef(c, node, "value", in.value(), scope));
  if (named.has_value()) {
    out->ref = *std::move(named);
  } else {
    absl::StatusOr<workflow::ValueRef> ref =
        workflow::ParseValueRef(in.value());
    if (!ref.ok()) return c.Wrap(node, "value", ref.status());
    out->ref = *std::move(ref);
    OUTBOX_RETURN_IF_ERROR(CheckRef(c, node, "value", &out->ref, scope));
  }
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

// Adds the `extract` of `node` (a step, allow_request false, or a revert)
// to `scope->names`.
absl::Status ParseExtract(
    const Checker& c, const Node& node,
    const google::protobuf::RepeatedPtrField<config::NamedValue>& extract,
    bool allow_request, Scope* scope) {
  for (int i = 0; i < extract.size(); ++i) {
    const Node child = c.Child(node, "extract", i);
    const config::NamedValue& in = extract.Get(i);
    if (!workflow::IsValueName(in.name())) {
      return c.Error(child, "name", -1,
                     absl::StrCat("\"", absl::CEscape(in.name()),
                                  "\" is not a value name: a letter or '_', "
                                  "then up to 63 letters, digits or '_'"));
    }
    if (scope->names.count(in.name()) > 0) {
      return c.Error(child, "name", -1,
                     absl::StrCat("{", in.name(), "} is already declared"));
    }
    absl::StatusOr<workflow::ValueRef> ref =
        workflow::ParseValueRef(in.value());
    if (!ref.ok()) return c.Wrap(child, "value", ref.status());
    if (!allow_request && ref->source == workflow::ValueRef::Source::kRequest) {
      return c.Error(child, "value", -1,
                     "a step's extract reads answers (response:...): a "
                     "request: value would read each later step's own "
                     "request; declare it in the revert's extract");
    }
    OUTBOX_RETURN_IF_ERROR(CheckRef(c, child, "value", &*ref, *scope));
    scope->names.emplace(in.name(), *std::move(ref));
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
                                            const Scope& scope) {
  absl::StatusOr<Template> t = workflow::ParseTemplate(text, kind, scope.names);
  if (!t.ok()) return c.Wrap(node, field, t.status());
  for (Template::Part& part : t->parts) {
    // A name's reference was checked where it was declared.
    if (!part.has_ref || !part.name.empty()) continue;
    OUTBOX_RETURN_IF_ERROR(CheckRef(c, node, field, &part.ref, scope));
  }
  return t;
}

absl::Status ParseRevert(const Checker& c, const Node& node,
                         const Destination& destination, Scope scope,
                         std::optional<RevertSpec>* out) {
  const auto& in = static_cast<const config::Revert&>(*node.message);
  if (in.url().empty()) {
    return c.Error(node, "url", -1,
                   "is required: a path at the step's destination "
                   "(\"/api/...\") or an http(s) URL");
  }
  const bool absolute = absl::StartsWithIgnoreCase(in.url(), "http://") ||
                        absl::StartsWithIgnoreCase(in.url(), "https://");
  absl::StatusOr<std::string> url = workflow::ResolveRevertUrl(
      in.url(), destination.url,
      in.other_origin() || (scope.stored && absolute));
  if (!url.ok()) return c.Wrap(node, "url", url.status());
  if (in.max_attempts() < 0) {
    return c.Error(node, "max_attempts", -1,
                   "must be 0 (the destination's schedule decides) or more");
  }
  OUTBOX_RETURN_IF_ERROR(ParseExtract(c, node, in.extract(), true, &scope));
  RevertSpec revert;
  revert.max_attempts = in.max_attempts();
  OUTBOX_ASSIGN_OR_RETURN(
      revert.url,
      ParseTemplateField(c, node, "url", *url, Template::Kind::kUrl, scope));
  OUTBOX_RETURN_IF_ERROR(
      CheckMethod(c, node, "method", in.method(), true, &revert.method));
  if (!in.payload().empty()) {
    OUTBOX_ASSIGN_OR_RETURN(
        revert.payload, ParseTemplateField(c, node, "payload", in.payload(),
                                           Template::Kind::kPayload, scope));
  }
  *out = std::move(revert);
  return absl::OkStatus();
}

absl::Status ParseTarget(const Checker& c, const Node& node,
                         const std::vector<Destination>& destinations,
                         const Scope& before, const Scope& with_self,
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
  return ParseRevert(c, c.Child(node, "revert", -1), *d, with_self,
                     &out->revert);
}

absl::Status ParseOnNoMatch(const Checker& c, const Node& node,
                            const std::string& value, const Scope& scope,
                            StepSpec* out) {
  if (value == "fail") return absl::OkStatus();
  // Unset: "fail", except in a definition stored before on_no_match
  // existed (definitions are stored with it spelled out since): its
  // workflows skipped such a step when they started, and keep doing so.
  if (value.empty()) {
    out->skip_on_no_match = scope.stored;
    return absl::OkStatus();
  }
  if (value == "skip") {
    out->skip_on_no_match = true;
    return absl::OkStatus();
  }
  return c.Error(node, "on_no_match", -1,
                 absl::StrCat("must be \"fail\" (the default) or \"skip\", "
                              "got \"",
                              absl::CEscape(value), "\""));
}

absl::Status ParseStep(const Checker& c, const Node& node,
                       const std::vector<Destination>& destinations,
                       Scope* scope, StepSpec* out) {
  const auto& in = static_cast<const config::WorkflowStep&>(*node.message);
  out->name = in.name();
  if (!IsName(out->name)) {
    return c.Error(node, "name", -1,
                   absl::StrCat("\"", absl::CEscape(out->name),
                                "\" is not a name: 1..64 characters of "
                                "[A-Za-z0-9_.-] are required"));
  }
  if (scope->steps.contains(out->name)) {
    return c.Error(
        node, "name", -1,
        absl::StrCat("\"", out->name, "\" is already a step of this workflow"));
  }
  OUTBOX_RETURN_IF_ERROR(
      CheckMethod(c, node, "method", in.method(), false, &out->method));
  OUTBOX_RETURN_IF_ERROR(
      ParseOnNoMatch(c, node, in.on_no_match(), *scope, out));
  Scope with_self = *scope;
  with_self.steps.insert(out->name);
  with_self.self = out->name;
  OUTBOX_RETURN_IF_ERROR(
      ParseExtract(c, node, in.extract(), false, &with_self));
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
    OUTBOX_RETURN_IF_ERROR(ParseTarget(c, as_target, destinations, *scope,
                                       with_self,
                                       &out->targets.emplace_back()));
  } else if (in.has_revert()) {
    return c.Error(node, "revert", -1,
                   "with `choose`, each target declares its own revert");
  }
  for (int i = 0; i < in.choose_size(); ++i) {
    OUTBOX_RETURN_IF_ERROR(ParseTarget(c, c.Child(node, "choose", i),
                                       destinations, *scope, with_self,
                                       &out->targets.emplace_back()));
  }
  // Later steps see this one's answer and names, not as their own.
  with_self.self.clear();
  *scope = std::move(with_self);
  return absl::OkStatus();
}

absl::Status ParseWorkflow(const Checker& c, const Node& node,
                           const std::vector<Destination>& destinations,
                           bool stored, WorkflowSpec* out) {
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
  absl::flat_hash_set<std::string> answers_read;
  Scope scope;
  scope.stored = stored;
  scope.answers_read = &answers_read;
  for (int i = 0; i < in.steps_size(); ++i) {
    OUTBOX_RETURN_IF_ERROR(ParseStep(c, c.Child(node, "steps", i), destinations,
                                     &scope, &out->steps.emplace_back()));
  }
  // Decided from the definition alone, so a stored definition loaded again
  // keeps the same answers its workflows kept.
  for (StepSpec& step : out->steps) {
    step.keep_answer = answers_read.contains(step.name);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseWorkflows(const Checker& c, const Node& root,
                            const std::vector<Destination>& destinations,
                            std::vector<WorkflowSpec>* out, bool stored) {
  const auto& in = static_cast<const config::AgentConfig&>(*root.message);
  absl::flat_hash_map<std::string, int> lines;  // event type -> line
  for (int i = 0; i < in.workflows_size(); ++i) {
    const Node node = c.Child(root, "workflows", i);
    WorkflowSpec spec;
    OUTBOX_RETURN_IF_ERROR(ParseWorkflow(c, node, destinations, stored, &spec));
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
