// Copyright (c) edge-outbox authors.

#include "agent/config/definition.h"

#include <openssl/sha.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/config/internal.h"
#include "base/status_macros.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "proto/agent_config.pb.h"

namespace outbox {
namespace {

using google::protobuf::TextFormat;

// Keeps the parser quiet: a stored text that does not parse is reported as
// damage by the caller, not printed to stderr.
class Silent : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, google::protobuf::io::ColumnNumber,
                const std::string&) override {}
};

bool ParseText(absl::string_view text, config::AgentConfig* proto,
               TextFormat::ParseInfoTree* tree) {
  Silent silent;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&silent);
  // A definition stored by a newer build (before a rollback) may set a
  // field this one does not know: its id still proves the text whole.
  parser.AllowUnknownField(true);
  if (tree != nullptr) parser.WriteLocationsTo(tree);
  return parser.ParseFromString(std::string(text), proto);
}

// The destinations `workflow` names, each once, in the order first named.
std::vector<std::string> NamedDestinations(const config::Workflow& workflow) {
  std::vector<std::string> names;
  absl::flat_hash_set<std::string> seen;
  auto add = [&](const std::string& name) {
    if (!name.empty() && seen.insert(name).second) names.push_back(name);
  };
  for (const config::WorkflowStep& step : workflow.steps()) {
    add(step.destination());
    for (const config::StepTarget& target : step.choose()) {
      add(target.destination());
    }
  }
  return names;
}

absl::Status ResolveInPlace(const config_internal::Checker& c,
                            std::string* path) {
  if (path->empty()) return absl::OkStatus();
  OUTBOX_ASSIGN_OR_RETURN(*path, c.Resolve(*path));
  return absl::OkStatus();
}

// `d` with every path absolute, as ParseDestination resolved it, so the
// copy means the same files wherever the configuration file moves.
absl::Status ResolvePaths(const config_internal::Checker& c,
                          config::Destination* d) {
  OUTBOX_RETURN_IF_ERROR(ResolveInPlace(c, d->mutable_secrets_file()));
  for (auto& [name, path] : *d->mutable_header_files()) {
    OUTBOX_RETURN_IF_ERROR(ResolveInPlace(c, &path));
  }
  if (d->has_tls()) {
    config::Tls* tls = d->mutable_tls();
    for (std::string* path :
         {tls->mutable_ca_file(), tls->mutable_ca_dir(),
          tls->mutable_client_cert_file(), tls->mutable_client_key_file()}) {
      OUTBOX_RETURN_IF_ERROR(ResolveInPlace(c, path));
    }
  }
  return absl::OkStatus();
}

// Whether an inline header's `name` says its value is a credential, which
// a definition (kept in the store) must not hold.
bool NamesACredential(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (absl::string_view exact :
       {"authorization", "proxy-authorization", "cookie", "api-key", "apikey",
        "x-api-key", "x-auth-token", "x-access-token"}) {
    if (lower == exact) return true;
  }
  for (absl::string_view suffix :
       {"-token", "-secret", "-password", "-api-key", "-apikey"}) {
    if (absl::EndsWith(lower, suffix)) return true;
  }
  return false;
}

// `proxy` without its user:password@, if it has one.
std::string WithoutUserInfo(const std::string& proxy) {
  const size_t scheme = proxy.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t end = proxy.find_first_of("/?#", start);
  const size_t at =
      proxy.rfind('@', end == std::string::npos ? proxy.size() : end);
  if (at == std::string::npos || at < start) return proxy;
  return proxy.substr(0, start) + proxy.substr(at + 1);
}

// Leaves out of `d`, a destination's stored copy, what would be a
// credential at rest in the store: inline headers named like one (a copy
// serves only once the configuration has dropped the destination; it then
// sends without them, and a receiver that wanted one refuses, which holds,
// never dead-letters) and a proxy's user:password@. header_files, secrets
// and TLS files are paths, read again when the copy is loaded.
void LeaveOutCredentials(config::Destination* d) {
  for (auto it = d->mutable_headers()->begin();
       it != d->mutable_headers()->end();) {
    if (NamesACredential(it->first)) {
      it = d->mutable_headers()->erase(it);
    } else {
      ++it;
    }
  }
  d->set_proxy(WithoutUserInfo(d->proxy()));
}

// The definition text of workflow `index` of `root`.
absl::StatusOr<std::string> DefinitionText(const config_internal::Checker& c,
                                           const config_internal::Node& root,
                                           int index) {
  const auto& proto = static_cast<const config::AgentConfig&>(*root.message);
  const config::Workflow& workflow = proto.workflows(index);
  config::AgentConfig definition;
  if (proto.has_retry()) *definition.mutable_retry() = proto.retry();
  for (const std::string& name : NamedDestinations(workflow)) {
    for (const config::Destination& d : proto.destinations()) {
      if (d.name() != name) continue;
      config::Destination* copy = definition.add_destinations();
      *copy = d;
      LeaveOutCredentials(copy);
      OUTBOX_RETURN_IF_ERROR(ResolvePaths(c, copy));
    }
  }
  config::Workflow* copy = definition.add_workflows();
  *copy = workflow;
  // Spelled out: a definition stored without it is from before
  // on_no_match existed, when such a step was skipped (config/workflows.cc).
  for (config::WorkflowStep& step : *copy->mutable_steps()) {
    if (step.choose_size() > 0 && step.on_no_match().empty()) {
      step.set_on_no_match("fail");
    }
  }
  std::string text;
  if (!TextFormat::PrintToString(definition, &text)) {
    return absl::InternalError("a workflow definition could not be printed");
  }
  return text;
}

}  // namespace

std::string WorkflowDefinitionId(absl::string_view text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
         digest);
  return absl::StrCat("wd1-", absl::BytesToHexString(absl::string_view(
                                  reinterpret_cast<const char*>(digest), 16)));
}

std::string WorkflowDefinitionType(absl::string_view text) {
  config::AgentConfig proto;
  if (!ParseText(text, &proto, nullptr) || proto.workflows_size() != 1) {
    return "";
  }
  return proto.workflows(0).event_type();
}

absl::StatusOr<AgentConfig> LoadWorkflowDefinition(absl::string_view id,
                                                   absl::string_view text,
                                                   const AgentConfig& current) {
  const std::string source = absl::StrCat("workflow definition ", id);
  config::AgentConfig proto;
  TextFormat::ParseInfoTree tree;
  if (!ParseText(text, &proto, &tree) || proto.workflows_size() != 1 ||
      WorkflowDefinitionId(text) != id) {
    return absl::DataLossError(
        absl::StrCat(source,
                     " is damaged: its stored text does not hash to its id or "
                     "does not hold one workflow"));
  }
  const char* credentials_dir = std::getenv("CREDENTIALS_DIRECTORY");
  const config_internal::Checker c(
      source, "", credentials_dir == nullptr ? "" : credentials_dir);
  const config_internal::Node root{&proto, &tree, "", 0};
  AgentConfig out;
  out.agent = current.agent;
  out.retry = current.retry;
  RetryPolicy stored_retry;
  OUTBOX_RETURN_IF_ERROR(config_internal::ApplyRetry(
      c, c.Child(root, "retry", -1), &stored_retry));
  for (int i = 0; i < proto.destinations_size(); ++i) {
    const Destination* now =
        FindDestination(current, proto.destinations(i).name());
    if (now != nullptr && now->kind == Destination::Kind::kHttp) {
      out.destinations.push_back(*now);  // where that server is today
      continue;
    }
    Destination stored;
    OUTBOX_RETURN_IF_ERROR(config_internal::ParseDestination(
        c, c.Child(root, "destinations", i), stored_retry, &stored));
    out.destinations.push_back(std::move(stored));
  }
  OUTBOX_RETURN_IF_ERROR(config_internal::ParseWorkflows(
      c, root, out.destinations, &out.workflows, /*stored=*/true));
  out.workflows[0].definition = std::string(text);
  out.workflows[0].definition_id = std::string(id);
  return out;
}

namespace config_internal {

absl::Status DefineWorkflows(const Checker& c, const Node& root,
                             std::vector<workflow::WorkflowSpec>* workflows) {
  for (size_t i = 0; i < workflows->size(); ++i) {
    workflow::WorkflowSpec& spec = (*workflows)[i];
    OUTBOX_ASSIGN_OR_RETURN(spec.definition,
                            DefinitionText(c, root, static_cast<int>(i)));
    spec.definition_id = WorkflowDefinitionId(spec.definition);
  }
  return absl::OkStatus();
}

}  // namespace config_internal
}  // namespace outbox
