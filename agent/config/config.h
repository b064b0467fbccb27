// Copyright (c) edge-outbox authors.
//
// The delivery agent's configuration: a protobuf text file (schema and
// defaults: proto/agent_config.proto; example:
// agent/config/testdata/agent.textproto) read, validated and resolved into the
// plain structs below, so the agent never sees an unchecked value, a relative
// path or an undecoded secret.
//
// Every error names where the problem is, "file:line: field.path: what", e.g.
//   agent.textproto:7: destinations[1].url: "ftp://x" is not an http(s) URL
// and never contains secret material (secrets, header values, credentials).

#ifndef OUTBOX_AGENT_CONFIG_CONFIG_H_
#define OUTBOX_AGENT_CONFIG_CONFIG_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/config/workflow_rows.h"
#include "agent/config/workflows.h"
#include "agent/retry/retry_policy.h"
#include "outbox/http_transport.h"
#include "outbox/options.h"
#include "platform/body_coding.h"
#include "platform/kafka_producer.h"
#include "webhooks/signature.h"

namespace outbox {

// How a destination publishes to an MQTT 5 broker, validated. Field meanings
// and defaults are those of outbox.config.Mqtt.
struct MqttSettings {
  std::string host;
  int port = 1883;
  bool use_tls = false;  // mqtts://
  std::string client_id;
  // A valid template (platform/mqtt_topic.h) over {device} and {type}.
  std::string topic;
  std::string username;
  std::string password;  // read from password_file; never logged
  int keepalive_seconds = 60;
  absl::Duration session_expiry = absl::Hours(168);
};

// How a destination produces to Kafka, validated. Field meanings and
// defaults are those of outbox.config.Kafka.
struct KafkaSettings {
  // A fixed topic, or a template over {type} (KafkaTopicFor).
  std::string topic;
  // bootstrap_servers, security, SASL (the password read from
  // password_file; never logged) and message_timeout. Its `tls` is left
  // unset: the destination's `tls` applies.
  KafkaOptions producer;
};

// The topic `topic_template` (outbox.config.Kafka.topic) names for an event
// of type `type`: every "{type}" replaced by it. Errors: kInvalidArgument
// when the result is not a Kafka topic name (1..249 characters of
// [A-Za-z0-9._-]) or the template has another placeholder; the message
// quotes neither the type nor the topic.
absl::StatusOr<std::string> KafkaTopicFor(absl::string_view topic_template,
                                          absl::string_view type);

// How a destination batches, validated. Field meanings and defaults are those
// of outbox.config.Batch.
struct BatchSettings {
  bool enabled = false;  // `batch` was given
  size_t max_events = 100;
  size_t max_bytes = 1 << 20;
  absl::Duration max_wait = absl::ZeroDuration();
  BodyCoding compression = BodyCoding::kIdentity;
};

// A destination's rate limit, validated (outbox.config.RateLimit); 0: none.
struct RateLimitSettings {
  double events_per_second = 0;
  int64_t bytes_per_second = 0;
  bool enabled() const { return events_per_second > 0 || bytes_per_second > 0; }
};

// One receiver of events, validated. Field meanings and defaults are those of
// outbox.config.Destination.
struct Destination {
  enum class Kind { kHttp, kMqtt, kKafka };
  Kind kind = Kind::kHttp;
  std::string name;
  // kHttp: http:// or https://, without credentials. kMqtt: the broker,
  // "mqtt://host:port" or "mqtts://host:port", for logs. kKafka:
  // "kafka://" and the bootstrap servers, for logs.
  std::string url;
  // kMqtt only.
  MqttSettings mqtt;
  // kKafka only.
  KafkaSettings kafka;
  // kHttp only.
  BatchSettings batch;
  RateLimitSettings rate_limit;
  // Every secret of the secrets file, in file order; each delivery is signed
  // with all of them. Empty when no secrets file is configured.
  std::vector<WebhookSecret> secrets;
  // The secrets file as resolved (absolute, or relative to the working
  // directory when the configuration's own path was relative;
  // $CREDENTIALS_DIRECTORY replaced); empty if none.
  std::string secrets_file;
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration timeout = absl::Seconds(30);
  // Extra headers: `headers` in file order, then `header_files` in file
  // order with their values read from the files. Names are valid HTTP
  // tokens, distinct (case-insensitively) and none the agent sets itself.
  std::vector<std::pair<std::string, std::string>> headers;
  // Paths resolved like secrets_file; files checked to exist.
  TlsOptions tls;
  std::string proxy;
  // The effective schedule: this destination's overrides over the global one.
  RetryPolicy retry;
  // Dead letters in a row with one answer before the destination is held
  // (proto's dead_letter_fuse); 0: no fuse.
  int dead_letter_fuse = 10;
};

// A routing rule. See outbox.config.Route for the matching rules.
struct RouteRule {
  enum class Kind { kExact, kPrefix, kAny };
  Kind kind = Kind::kExact;
  // As written: "sale.created", "sale.*" or "*".
  std::string event_type;
  // For kPrefix, what a matching type starts with ("sale."); else empty.
  std::string prefix;
  // Names an entry of AgentConfig::destinations.
  std::string destination;
};

// Defaults as in outbox.config.AgentSettings.
struct AgentSettings {
  int max_in_flight = 8;
  absl::Duration probe_interval_min = absl::Seconds(1);
  absl::Duration probe_interval_max = absl::Seconds(30);
  absl::Duration idempotency_purge_interval = absl::Hours(1);
  // absl::ZeroDuration() means dead letters are kept forever.
  absl::Duration dead_letter_retention = absl::Hours(720);
  absl::Duration ack_sync_interval = absl::Seconds(1);
  Options::MemoryProfile memory_profile = Options::MemoryProfile::kDefault;
  // Resolved like secrets_file; its directory exists. Empty: no file.
  std::string metrics_file;
  absl::Duration metrics_interval = absl::Seconds(15);
  // ZeroDuration(): no check.
  absl::Duration clock_tolerance = absl::Minutes(5);
  bool require_synchronized_clock = false;
  size_t workflow_response_bytes = 64 << 10;
  size_t result_body_bytes = 4096;
  // `workflow_storage`: "rows" (true) or "states"
  // (agent/config/workflow_rows.h).
  bool workflow_rows = workflow::kWriteWorkflowRows;
  // absl::ZeroDuration(): finished workflows are kept forever.
  absl::Duration workflow_retention = absl::Hours(720);
};

// A validated configuration. Plain data: safe for concurrent reads, needs
// external synchronization for writes.
struct AgentConfig {
  // At least one; names are unique.
  std::vector<Destination> destinations;
  // Every route names an existing destination; patterns are unique.
  std::vector<RouteRule> routes;
  // The top-level schedule (destinations hold their effective ones).
  RetryPolicy retry;
  AgentSettings agent;
  // Event types are unique; every target names an existing destination.
  std::vector<workflow::WorkflowSpec> workflows;
  // The store's Options::event_classes, for whoever opens the store from
  // this configuration; checked as Store::Open checks them.
  std::vector<EventClass> classes;
};

// Reads and validates the configuration file at `path`. Relative paths inside
// it resolve against the file's directory, and paths starting with
// "$CREDENTIALS_DIRECTORY/" against that environment variable (systemd's
// LoadCredential=), read once per call.
// Errors:
//   kNotFound          `path`, a secrets file, a header value file or a TLS
//                      file does not exist
//   kPermissionDenied  a file exists but cannot be read by this process
//   kFailedPrecondition a secrets file or header value file is readable by
//                      group or others (the message says which chmod fixes
//                      it), a path is not the kind of file expected, or a
//                      path names $CREDENTIALS_DIRECTORY and it is not set
//   kInvalidArgument   syntax error ("file:line:column: ..."), a value out of
//                      range, an unknown destination, a malformed secret, ...
absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path);

// As LoadAgentConfig, for text already in memory. `source_name` prefixes
// error messages, and relative paths in `text` resolve against its directory
// (the working directory when it has none). Same errors.
absl::StatusOr<AgentConfig> ParseAgentConfig(absl::string_view text,
                                             absl::string_view source_name);

// OK unless a workflow of `workflows` has its event type in an evictable
// class of `classes` (the store's): its event could be evicted or expired
// half-way, and its compensation would never run. kFailedPrecondition
// naming both. The loader refuses the same in a configuration's own
// classes, with their line; this checks the classes a store was opened with.
absl::Status CheckWorkflowsNotEvictable(
    const std::vector<EventClass>& classes,
    const std::vector<workflow::WorkflowSpec>& workflows);

// Where an event goes. A non-empty `explicit_destination` (the event's own
// choice) bypasses routes: the destination of that name. Otherwise the most
// specific route matching `event_type`: exact, then longest prefix, then "*".
// The pointer borrows from `config`, which must outlive it.
// Errors: kNotFound when `explicit_destination` names no destination or no
// route matches `event_type` (the event cannot be delivered with this
// configuration; the caller decides whether to hold or dead-letter it).
absl::StatusOr<const Destination*> Route(
    const AgentConfig& config, absl::string_view event_type,
    absl::string_view explicit_destination);

// The destination named `name`, or null. Borrows from `config`.
const Destination* FindDestination(const AgentConfig& config,
                                   absl::string_view name);

// The workflow for an event of `event_type` that names
// `explicit_destination` (empty: routed by type), or null: an event with an
// explicit destination, or a type without a workflow, is routed as usual.
const workflow::WorkflowSpec* WorkflowFor(
    const AgentConfig& config, absl::string_view event_type,
    absl::string_view explicit_destination);

}  // namespace outbox

#endif  // OUTBOX_AGENT_CONFIG_CONFIG_H_
