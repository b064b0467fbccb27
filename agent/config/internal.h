// Copyright (c) edge-outbox authors.
//
// Internals of outbox_agent_config shared by config.cc (the whole file,
// routes, agent settings), config/checker.cc (locating and reporting errors,
// durations, retry overrides) and config/destination.cc (one destination).
// Not for use outside agent/config*.cc.

#ifndef OUTBOX_AGENT_CONFIG_INTERNAL_H_
#define OUTBOX_AGENT_CONFIG_INTERNAL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/config/config.h"
#include "agent/retry/retry_policy.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "proto/agent_config.pb.h"

namespace outbox::config_internal {

// One message of the parsed text and where it was written.
struct Node {
  const google::protobuf::Message* message;
  // Locations of its fields; null when the message was not written at all
  // (an unset submessage), in which case errors point at `line`.
  const google::protobuf::TextFormat::ParseInfoTree* tree;
  // Field path from the root, e.g. "destinations[1].tls"; "" for the root.
  std::string path;
  // 1-based line where the message starts; 0 when unknown.
  int line;
};

// Turns fields into error messages "source:line: path: what", reads duration
// fields and resolves paths, for one configuration text. Fields are named by
// their proto names, so a message names exactly what to edit.
// Immutable; safe for concurrent use.
class Checker {
 public:
  // `source` prefixes messages; relative paths resolve against `dir` ("" for
  // the working directory), paths starting with $CREDENTIALS_DIRECTORY/
  // against `credentials_dir` ("" when that variable is not set).
  Checker(absl::string_view source, absl::string_view dir,
          absl::string_view credentials_dir)
      : source_(source), dir_(dir), credentials_dir_(credentials_dir) {}

  // REQUIRES: `field` names a field of node.message (a typo here is a bug,
  // not a configuration error); message fields for Child().
  const google::protobuf::FieldDescriptor* Field(const Node& node,
                                                 absl::string_view field) const;

  // The submessage `field` of `node`; `index` for a repeated field, else -1.
  Node Child(const Node& node, absl::string_view field, int index) const;

  // An error about `field` (value `index` of a repeated field, else -1) of
  // `node`, on the field's line, or the node's when the field is unset. An
  // empty `field` means the node itself.
  absl::Status Error(
      const Node& node, absl::string_view field, int index,
      absl::string_view what,
      absl::StatusCode code = absl::StatusCode::kInvalidArgument) const;

  // `status` (from a file check, say) prefixed with where it applies; keeps
  // its code.
  absl::Status Wrap(const Node& node, absl::string_view field,
                    const absl::Status& status) const {
    return Error(node, field, -1, status.message(), status.code());
  }

  // Relative paths are relative to the configuration file's directory, so a
  // configuration and its secrets can move together. A path starting with
  // "$CREDENTIALS_DIRECTORY/" (or "${CREDENTIALS_DIRECTORY}/") is relative to
  // the directory where systemd puts a service's LoadCredential= copies, so
  // secrets kept root-only on disk reach the agent without a literal
  // /run/credentials/<unit> path (see dist/outbox-agent.service.in).
  // Errors: kFailedPrecondition when the path names $CREDENTIALS_DIRECTORY
  // and it is not set. The message never repeats the path.
  absl::StatusOr<std::string> Resolve(const std::string& path) const;

  enum class Bound { kPositive, kNonNegative };

  // Parses the duration string `field` of `node` into `*out`. Leaves `*out`
  // (the default) alone when the field is empty. Infinite durations are
  // rejected: every limit here must end.
  absl::Status Duration(const Node& node, absl::string_view field, Bound bound,
                        absl::Duration* out) const;

 private:
  int Line(const Node& node, absl::string_view field, int index) const;

  std::string source_;
  std::string dir_;
  std::string credentials_dir_;
};

// Applies the overrides of `node` (an outbox.config.RetryConfig) to
// `*policy`, then checks the result.
absl::Status ApplyRetry(const Checker& checker, const Node& node,
                        RetryPolicy* policy);

// 1..64 characters of [A-Za-z0-9_.-]: destination and step names.
bool IsName(absl::string_view name);

// Validates `node` (an outbox.config.Destination) into `*out`, reading its
// secrets and checking its TLS files. `global` is the top-level schedule.
absl::Status ParseDestination(const Checker& checker, const Node& node,
                              const RetryPolicy& global, Destination* out);

// The HTTP-only fields of `node` (an outbox.config.Destination): an error
// naming the first one set, beside the `kind` ("mqtt", "kafka") part.
absl::Status RejectHttpFields(const Checker& checker, const Node& node,
                              absl::string_view kind);

// Reads the password file `path` (field `field` of `node`; one line, private
// to its owner) into `*out`. Errors name the field, never the password.
absl::Status ReadPasswordFile(const Checker& checker, const Node& node,
                              absl::string_view field, const std::string& path,
                              std::string* out);

// Validates the `kafka` part of `node` (an outbox.config.Destination with
// `kafka` set) into `*out` (config/kafka.cc), rejecting fields that do not
// apply.
absl::Status ParseKafkaDestination(const Checker& checker, const Node& node,
                                   Destination* out);

// Validates the `mqtt` part of `node` (an outbox.config.Destination with
// `mqtt` set) into `*out` (config/mqtt.cc), rejecting HTTP-only fields.
absl::Status ParseMqttDestination(const Checker& checker, const Node& node,
                                  Destination* out);

// Validates the `workflows` of `root` (an outbox.config.AgentConfig) into
// `*out`. `names`: the destinations' names (config/workflows.cc). `stored`:
// `root` is a stored definition a workflow started under, whose absolute
// revert URLs at another origin were accepted then (no other_origin
// needed).
absl::Status ParseWorkflows(const Checker& checker, const Node& root,
                            const std::vector<Destination>& destinations,
                            std::vector<workflow::WorkflowSpec>* out,
                            bool stored = false);

// Parses root's `classes` into `*classes`, checked as the store checks
// Options::event_classes, and refuses a class that may evict or expire a
// type one of `workflows` runs.
absl::Status ParseClasses(const Checker& c, const Node& root,
                          const std::vector<workflow::WorkflowSpec>& workflows,
                          std::vector<EventClass>* classes);

// Sets the stored definition and its id (definition.h) of each of
// `workflows`, parsed from the workflows of `root` in the same order. The
// store keeps a definition, so no credential may be in it: an inline header
// named like one (Authorization, Cookie, X-Api-Key, *-Token...) and a proxy
// URL's user:password@ are left out of a destination's copy (header_files
// are paths, read again when a copy is loaded).
absl::Status DefineWorkflows(const Checker& checker, const Node& root,
                             std::vector<workflow::WorkflowSpec>* workflows);

}  // namespace outbox::config_internal

#endif  // OUTBOX_AGENT_CONFIG_INTERNAL_H_
