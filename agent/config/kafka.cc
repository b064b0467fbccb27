// Copyright (c) edge-outbox authors.
//
// The `kafka` part of a destination: the bootstrap servers, topic (template),
// security protocol, SASL credentials and message timeout.

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "agent/config/internal.h"
#include "base/status_macros.h"
#include "proto/agent_config.pb.h"

namespace outbox {

absl::StatusOr<std::string> KafkaTopicFor(absl::string_view topic_template,
                                          absl::string_view type) {
  std::string topic = absl::StrReplaceAll(topic_template, {{"{type}", type}});
  if (topic.empty() || topic.size() > 249) {
    return absl::InvalidArgumentError(
        "makes a Kafka topic name that is empty or longer than 249 "
        "characters");
  }
  const bool valid = std::all_of(topic.begin(), topic.end(), [](char ch) {
    return absl::ascii_isalnum(ch) || ch == '.' || ch == '_' || ch == '-';
  });
  if (!valid) {
    // A brace left over is a placeholder other than {type}.
    return absl::InvalidArgumentError(
        "makes a Kafka topic name with characters outside [A-Za-z0-9._-] "
        "(the only placeholder is {type})");
  }
  return topic;
}

namespace config_internal {
namespace {

using Bound = Checker::Bound;

absl::Status ParseSecurity(const Checker& c, const Node& node,
                           KafkaOptions* out) {
  const auto& in = static_cast<const config::Kafka&>(*node.message);
  const std::string& security = in.security();
  if (security.empty() || security == "plaintext") {
    out->security = KafkaSecurity::kPlaintext;
  } else if (security == "ssl") {
    out->security = KafkaSecurity::kSsl;
  } else if (security == "sasl_plaintext") {
    out->security = KafkaSecurity::kSaslPlaintext;
  } else if (security == "sasl_ssl") {
    out->security = KafkaSecurity::kSaslSsl;
  } else {
    return c.Error(node, "security", -1,
                   "must be \"plaintext\", \"ssl\", \"sasl_plaintext\" or "
                   "\"sasl_ssl\"");
  }
  const bool sasl = out->security == KafkaSecurity::kSaslPlaintext ||
                    out->security == KafkaSecurity::kSaslSsl;
  if (!sasl) {
    const struct {
      absl::string_view field;
      bool set;
    } sasl_only[] = {{"sasl_mechanism", !in.sasl_mechanism().empty()},
                     {"username", !in.username().empty()},
                     {"password_file", !in.password_file().empty()}};
    for (const auto& f : sasl_only) {
      if (!f.set) continue;
      return c.Error(node, f.field, -1,
                     "applies only with security \"sasl_plaintext\" or "
                     "\"sasl_ssl\"");
    }
    return absl::OkStatus();
  }
  if (!in.sasl_mechanism().empty()) out->sasl_mechanism = in.sasl_mechanism();
  if (out->sasl_mechanism != "PLAIN" &&
      out->sasl_mechanism != "SCRAM-SHA-256" &&
      out->sasl_mechanism != "SCRAM-SHA-512") {
    return c.Error(node, "sasl_mechanism", -1,
                   "must be \"PLAIN\", \"SCRAM-SHA-256\" or \"SCRAM-SHA-512\"");
  }
  if (in.username().empty()) {
    return c.Error(node, "username", -1, "is required with SASL");
  }
  out->username = in.username();
  if (in.password_file().empty()) {
    return c.Error(node, "password_file", -1, "is required with SASL");
  }
  return ReadPasswordFile(c, node, "password_file", in.password_file(),
                          &out->password);
}

}  // namespace

absl::Status ParseKafkaDestination(const Checker& c, const Node& node,
                                   Destination* out) {
  OUTBOX_RETURN_IF_ERROR(RejectHttpFields(c, node, "kafka"));
  const auto& destination =
      static_cast<const config::Destination&>(*node.message);
  if (!destination.connect_timeout().empty()) {
    return c.Error(node, "connect_timeout", -1,
                   "does not apply to a `kafka` destination (librdkafka "
                   "reconnects by itself; `kafka.message_timeout` bounds a "
                   "message)");
  }
  const Node kafka = c.Child(node, "kafka", -1);
  const auto& in = static_cast<const config::Kafka&>(*kafka.message);
  out->kind = Destination::Kind::kKafka;
  KafkaSettings& k = out->kafka;
  if (in.bootstrap_servers().empty()) {
    return c.Error(kafka, "bootstrap_servers", -1,
                   "is required: \"host:port[,host:port...]\"");
  }
  for (absl::string_view server : absl::StrSplit(in.bootstrap_servers(), ',')) {
    const size_t colon = server.rfind(':');
    if (server.empty() || colon == absl::string_view::npos || colon == 0 ||
        server.find_first_of(" /@") != absl::string_view::npos) {
      return c.Error(
          kafka, "bootstrap_servers", -1,
          absl::StrCat("\"", absl::CEscape(server), "\" is not host:port"));
    }
  }
  k.producer.bootstrap_servers = in.bootstrap_servers();
  out->url = absl::StrCat("kafka://", in.bootstrap_servers());
  if (in.topic().empty()) {
    return c.Error(kafka, "topic", -1,
                   "is required: a topic name, or a template with {type}");
  }
  // Checked with a type that is itself a valid name, so only the template's
  // own characters can fail.
  absl::StatusOr<std::string> topic = KafkaTopicFor(in.topic(), "t");
  if (!topic.ok()) return c.Wrap(kafka, "topic", topic.status());
  k.topic = in.topic();
  OUTBOX_RETURN_IF_ERROR(ParseSecurity(c, kafka, &k.producer));
  OUTBOX_RETURN_IF_ERROR(c.Duration(kafka, "message_timeout", Bound::kPositive,
                                    &k.producer.message_timeout));
  if (k.producer.message_timeout < absl::Seconds(1) ||
      k.producer.message_timeout > absl::Hours(24)) {
    return c.Error(kafka, "message_timeout", -1, "must be 1s..24h");
  }
  const std::string& codec = in.compression();
  if (!codec.empty()) {
    if (codec != "none" && codec != "gzip" && codec != "snappy" &&
        codec != "lz4" && codec != "zstd") {
      return c.Error(kafka, "compression", -1,
                     absl::StrCat("must be \"none\", \"gzip\", \"snappy\", "
                                  "\"lz4\" or \"zstd\", got \"",
                                  absl::CEscape(codec), "\""));
    }
    k.producer.compression = codec;
  }
  return absl::OkStatus();
}

}  // namespace config_internal
}  // namespace outbox
