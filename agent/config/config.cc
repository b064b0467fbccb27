// Copyright (c) edge-outbox authors.
//
// Parsing the configuration text, the top-level checks, routes and agent
// settings. Destinations: config/destination.cc; what a parsed configuration
// answers (Route, FindDestination, WorkflowFor): config/lookup.cc.

#include "agent/config/config.h"

#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/config/files.h"
#include "agent/config/internal.h"
#include "base/status_macros.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "platform/atomic_file.h"
#include "proto/agent_config.pb.h"

namespace outbox {
namespace {

using config_internal::Checker;
using config_internal::Node;
using google::protobuf::TextFormat;
using Bound = Checker::Bound;

// Replaces the base64 after every "whsec_" with "<redacted>": the parser
// quotes the token it choked on, and a secret pasted unquoted into the
// configuration must not travel on into a log.
std::string RedactSecrets(absl::string_view text) {
  constexpr absl::string_view kPrefix = "whsec_";
  std::string out;
  for (size_t at; (at = text.find(kPrefix)) != absl::string_view::npos;) {
    absl::StrAppend(&out, text.substr(0, at + kPrefix.size()), "<redacted>");
    text.remove_prefix(at + kPrefix.size());
    while (!text.empty() && (absl::ascii_isalnum(text.front()) ||
                             absl::StrContains("+/=_-", text.front()))) {
      text.remove_prefix(1);
    }
  }
  absl::StrAppend(&out, text);
  return out;
}

// The parser's message without the token it choked on: "Expected string,
// got: ghp_x1..." and 'Expected ":", found "sk_live_..."' quote the token,
// which may be a credential pasted without quotes. The line and column
// already point at it. Other messages keep their text ('no field named
// "urll"'), with any whsec_ secret redacted.
std::string WithoutQuotedToken(absl::string_view message) {
  for (absl::string_view marker : {", got: ", ", found "}) {
    const size_t at = message.find(marker);
    if (at != absl::string_view::npos) {
      return absl::StrCat(message.substr(0, at), " at this column");
    }
  }
  return RedactSecrets(message);
}

// Keeps the parser's first error as "source:line:column: message".
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  explicit FirstError(absl::string_view source) : source_(source) {}
  void AddError(int line, int column, const std::string& message) override {
    if (!first_.empty()) return;
    first_ = absl::StrCat(source_, ":", line + 1, ":", column + 1, ": ",
                          WithoutQuotedToken(message));
  }
  const std::string& first() const { return first_; }

 private:
  std::string source_;
  std::string first_;
};

absl::Status ParseRoutes(const Checker& c, const Node& root,
                         const absl::flat_hash_map<std::string, int>& names,
                         std::vector<RouteRule>* routes) {
  const auto& in = static_cast<const config::AgentConfig&>(*root.message);
  std::map<std::string, int> lines;  // pattern -> line of its first route
  for (int i = 0; i < in.routes_size(); ++i) {
    const Node node = c.Child(root, "routes", i);
    RouteRule rule;
    rule.event_type = in.routes(i).event_type();
    rule.destination = in.routes(i).destination();
    const std::string& type = rule.event_type;
    absl::string_view literal = type;  // the part that must hold no '*'
    if (type == "*") {
      rule.kind = RouteRule::Kind::kAny;
      literal = "";
    } else if (absl::EndsWith(type, ".*") && type.size() > 2) {
      rule.kind = RouteRule::Kind::kPrefix;
      rule.prefix = type.substr(0, type.size() - 1);  // keeps the '.'
      literal = rule.prefix;
    }
    if (type.empty() || absl::StrContains(literal, '*')) {
      return c.Error(node, "event_type", -1,
                     absl::StrCat("\"", absl::CEscape(type),
                                  "\" is not an event type pattern: write an "
                                  "exact type, a prefix like \"sale.*\", or "
                                  "\"*\""));
    }
    if (!names.contains(rule.destination)) {
      return c.Error(node, "destination", -1,
                     absl::StrCat("no destination is named \"",
                                  absl::CEscape(rule.destination), "\""));
    }
    const auto [it, inserted] = lines.emplace(type, node.line);
    if (!inserted) {
      return c.Error(node, "event_type", -1,
                     absl::StrCat("\"", type, "\" is already routed (line ",
                                  it->second, ")"));
    }
    routes->push_back(std::move(rule));
  }
  return absl::OkStatus();
}

absl::Status ParseMetrics(const Checker& c, const Node& node,
                          AgentSettings* out) {
  const auto& in = static_cast<const config::AgentSettings&>(*node.message);
  OUTBOX_RETURN_IF_ERROR(c.Duration(node, "metrics_interval", Bound::kPositive,
                                    &out->metrics_interval));
  if (in.metrics_file().empty()) return absl::OkStatus();
  absl::StatusOr<std::string> path = c.Resolve(in.metrics_file());
  if (!path.ok()) return c.Wrap(node, "metrics_file", path.status());
  out->metrics_file = *std::move(path);
  // Checked now, so a typo in the directory stops the agent at its start
  // rather than leaving a log line per interval.
  const size_t slash = out->metrics_file.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                       : out->metrics_file.substr(0, slash);
  absl::Status writable = CheckDirectoryWritable(dir);
  if (!writable.ok()) {
    return c.Error(
        node, "metrics_file", -1,
        absl::StrCat("cannot write metrics there: ", writable.message()),
        writable.code());
  }
  return absl::OkStatus();
}

absl::Status ParseWorkflowSettings(const Checker& c, const Node& node,
                                   AgentSettings* out) {
  const auto& in = static_cast<const config::AgentSettings&>(*node.message);
  if (in.has_workflow_response_bytes()) {
    if (in.workflow_response_bytes() < 1) {
      return c.Error(
          node, "workflow_response_bytes", -1,
          absl::StrCat("must be >= 1, got ", in.workflow_response_bytes()));
    }
    out->workflow_response_bytes =
        static_cast<size_t>(in.workflow_response_bytes());
  }
  if (in.has_result_body_bytes()) {
    if (in.result_body_bytes() < 0) {
      return c.Error(
          node, "result_body_bytes", -1,
          absl::StrCat("must be >= 0, got ", in.result_body_bytes()));
    }
    out->result_body_bytes = static_cast<size_t>(in.result_body_bytes());
  }
  if (in.workflow_storage() == "rows" || in.workflow_storage() == "states") {
    out->workflow_rows = in.workflow_storage() == "rows";
  } else if (!in.workflow_storage().empty()) {
    return c.Error(node, "workflow_storage", -1,
                   absl::StrCat("must be \"states\" or \"rows\", got \"",
                                in.workflow_storage(), "\""));
  }
  return c.Duration(node, "workflow_retention", Bound::kNonNegative,
                    &out->workflow_retention);
}

absl::Status ParseAgent(const Checker& c, const Node& node,
                        AgentSettings* out) {
  const auto& in = static_cast<const config::AgentSettings&>(*node.message);
  if (in.has_max_in_flight()) {
    if (in.max_in_flight() < 1) {
      return c.Error(node, "max_in_flight", -1,
                     absl::StrCat("must be >= 1, got ", in.max_in_flight()));
    }
    out->max_in_flight = in.max_in_flight();
  }
  OUTBOX_RETURN_IF_ERROR(c.Duration(
      node, "probe_interval_min", Bound::kPositive, &out->probe_interval_min));
  OUTBOX_RETURN_IF_ERROR(c.Duration(
      node, "probe_interval_max", Bound::kPositive, &out->probe_interval_max));
  if (out->probe_interval_max < out->probe_interval_min) {
    return c.Error(
        node, "probe_interval_max", -1,
        absl::StrCat("must be >= probe_interval_min (",
                     absl::FormatDuration(out->probe_interval_min), ")"));
  }
  OUTBOX_RETURN_IF_ERROR(c.Duration(node, "idempotency_purge_interval",
                                    Bound::kPositive,
                                    &out->idempotency_purge_interval));
  OUTBOX_RETURN_IF_ERROR(c.Duration(node, "dead_letter_retention",
                                    Bound::kNonNegative,
                                    &out->dead_letter_retention));
  OUTBOX_RETURN_IF_ERROR(c.Duration(node, "ack_sync_interval", Bound::kPositive,
                                    &out->ack_sync_interval));
  OUTBOX_RETURN_IF_ERROR(c.Duration(
      node, "clock_tolerance", Bound::kNonNegative, &out->clock_tolerance));
  out->require_synchronized_clock = in.require_synchronized_clock();
  OUTBOX_RETURN_IF_ERROR(ParseMetrics(c, node, out));
  OUTBOX_RETURN_IF_ERROR(ParseWorkflowSettings(c, node, out));
  if (in.memory_profile() == "small") {
    out->memory_profile = Options::MemoryProfile::kSmall;
  } else if (!in.memory_profile().empty() && in.memory_profile() != "default") {
    return c.Error(node, "memory_profile", -1,
                   absl::StrCat("must be \"default\" or \"small\", got \"",
                                in.memory_profile(), "\""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AgentConfig> ParseAgentConfig(absl::string_view text,
                                             absl::string_view source_name) {
  config::AgentConfig proto;
  TextFormat::ParseInfoTree tree;
  FirstError errors(source_name);
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(std::string(text), &proto)) {
    return absl::InvalidArgumentError(
        errors.first().empty() ? absl::StrCat(source_name, ": syntax error")
                               : errors.first());
  }

  const size_t slash = source_name.rfind('/');
  // Set by systemd for a unit with LoadCredential= (dist/).
  const char* credentials_dir = std::getenv("CREDENTIALS_DIRECTORY");
  const Checker c(source_name,
                  slash == absl::string_view::npos
                      ? absl::string_view()
                      : source_name.substr(0, slash == 0 ? 1 : slash),
                  credentials_dir == nullptr ? "" : credentials_dir);
  const Node root{&proto, &tree, "", 0};
  AgentConfig config;
  OUTBOX_RETURN_IF_ERROR(config_internal::ApplyRetry(
      c, c.Child(root, "retry", -1), &config.retry));
  if (proto.destinations_size() == 0) {
    return c.Error(root, "destinations", -1,
                   "at least one destination is required");
  }
  absl::flat_hash_map<std::string, int> names;  // name -> line
  for (int i = 0; i < proto.destinations_size(); ++i) {
    const Node node = c.Child(root, "destinations", i);
    Destination destination;
    OUTBOX_RETURN_IF_ERROR(
        config_internal::ParseDestination(c, node, config.retry, &destination));
    const auto [it, inserted] = names.emplace(destination.name, node.line);
    if (!inserted) {
      return c.Error(node, "name", -1,
                     absl::StrCat("\"", destination.name,
                                  "\" is already the name of the destination "
                                  "at line ",
                                  it->second));
    }
    config.destinations.push_back(std::move(destination));
  }
  OUTBOX_RETURN_IF_ERROR(ParseRoutes(c, root, names, &config.routes));
  OUTBOX_RETURN_IF_ERROR(config_internal::ParseWorkflows(
      c, root, config.destinations, &config.workflows));
  OUTBOX_RETURN_IF_ERROR(
      config_internal::DefineWorkflows(c, root, &config.workflows));
  OUTBOX_RETURN_IF_ERROR(config_internal::ParseClasses(
      c, root, config.workflows, &config.classes));
  OUTBOX_RETURN_IF_ERROR(
      ParseAgent(c, c.Child(root, "agent", -1), &config.agent));
  return config;
}

absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path) {
  OUTBOX_ASSIGN_OR_RETURN(std::string text, config_files::ReadConfigText(path));
  return ParseAgentConfig(text, path);
}

}  // namespace outbox
