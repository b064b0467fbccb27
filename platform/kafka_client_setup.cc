// Copyright (c) edge-outbox authors.

#include "platform/kafka_client_setup.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace outbox {
namespace {

bool UsesTls(KafkaSecurity security) {
  return security == KafkaSecurity::kSsl || security == KafkaSecurity::kSaslSsl;
}

bool UsesSasl(KafkaSecurity security) {
  return security == KafkaSecurity::kSaslPlaintext ||
         security == KafkaSecurity::kSaslSsl;
}

const char* ProtocolName(KafkaSecurity security) {
  switch (security) {
    case KafkaSecurity::kSsl:
      return "ssl";
    case KafkaSecurity::kSaslPlaintext:
      return "sasl_plaintext";
    case KafkaSecurity::kSaslSsl:
      return "sasl_ssl";
    case KafkaSecurity::kPlaintext:
      break;
  }
  return "plaintext";
}

// librdkafka's log lines go to stderr by default (rd_kafka_log_print) and
// name brokers, topics and configuration; what the caller needs arrives
// through the error callback and the delivery reports instead. Runs on
// librdkafka's own threads, so it must not touch the producer.
void DropLog(const rd_kafka_t*, int, const char*, const char*) {}

// The settings in the order they are applied; `secret` ones never have
// their value, or librdkafka's words about it, in a status.
struct Setting {
  const char* name;
  std::string value;
  bool secret = false;
};

std::vector<Setting> Settings(const KafkaOptions& options) {
  const int64_t timeout_ms = absl::ToInt64Milliseconds(options.message_timeout);
  std::vector<Setting> s = {
      {"bootstrap.servers", options.bootstrap_servers},
      {"client.id", options.client_id},
      // Retries, reconnects and leader changes never duplicate or reorder a
      // partition; this needs acks=all (librdkafka checks it).
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"message.timeout.ms", absl::StrCat(timeout_ms)},
      // A message counts until its report has been served, so this is
      // KafkaOptions::max_in_flight exactly (__QUEUE_FULL beyond it).
      {"queue.buffering.max.messages", absl::StrCat(options.max_in_flight)},
      // The agent sends an ordering key's events one at a time (FIFO), so
      // waiting for a fuller batch (librdkafka waits 5 ms by default) only
      // delays each; messages of several keys in flight still share one.
      {"linger.ms", "0"},
      {"security.protocol", ProtocolName(options.security)},
      {"compression.codec", options.compression},
  };
  if (options.TEST_socket_timeout > absl::ZeroDuration()) {
    s.push_back({"socket.timeout.ms", absl::StrCat(absl::ToInt64Milliseconds(
                                          options.TEST_socket_timeout))});
  }
  if (UsesTls(options.security)) {
    const TlsOptions& tls = options.tls;
    const std::string& ca = tls.ca_file.empty() ? tls.ca_dir : tls.ca_file;
    if (!ca.empty()) s.push_back({"ssl.ca.location", ca});
    if (!tls.client_cert_file.empty()) {
      s.push_back({"ssl.certificate.location", tls.client_cert_file});
      // An empty key file: the key is in the certificate file.
      s.push_back({"ssl.key.location", tls.client_key_file.empty()
                                           ? tls.client_cert_file
                                           : tls.client_key_file});
    }
    s.push_back({"enable.ssl.certificate.verification",
                 tls.verify_peer ? "true" : "false"});
    s.push_back({"ssl.endpoint.identification.algorithm",
                 tls.verify_host ? "https" : "none"});
  }
  if (UsesSasl(options.security)) {
    s.push_back({"sasl.mechanisms", options.sasl_mechanism});
    s.push_back({"sasl.username", options.username});
    s.push_back({"sasl.password", options.password, /*secret=*/true});
  }
  return s;
}

absl::Status Apply(rd_kafka_conf_t* conf, const Setting& setting) {
  char errstr[512] = "";
  const rd_kafka_conf_res_t res = rd_kafka_conf_set(
      conf, setting.name, setting.value.c_str(), errstr, sizeof(errstr));
  if (res == RD_KAFKA_CONF_OK) return absl::OkStatus();
  const std::string what =
      absl::StrCat("Kafka option ", setting.name,
                   setting.secret ? "" : absl::StrCat(": ", errstr));
  if (res == RD_KAFKA_CONF_UNKNOWN) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " (librdkafka was built without it)"));
  }
  return absl::InvalidArgumentError(what);
}

}  // namespace

absl::Status CheckKafkaOptions(const KafkaOptions& options) {
  if (options.bootstrap_servers.empty()) {
    return absl::InvalidArgumentError("Kafka: bootstrap servers are required");
  }
  const TlsOptions& tls = options.tls;
  if (!tls.ca_file.empty() && !tls.ca_dir.empty()) {
    return absl::InvalidArgumentError(
        "Kafka TLS: give a CA file or a CA directory, not both");
  }
  if (tls.client_key_file.size() > 0 && tls.client_cert_file.empty()) {
    return absl::InvalidArgumentError(
        "Kafka TLS: a client key needs its certificate");
  }
  if (UsesSasl(options.security)) {
    const std::string& m = options.sasl_mechanism;
    if (m != "PLAIN" && m != "SCRAM-SHA-256" && m != "SCRAM-SHA-512") {
      return absl::InvalidArgumentError(
          "Kafka SASL: the mechanism must be PLAIN, SCRAM-SHA-256 or "
          "SCRAM-SHA-512");
    }
    if (options.username.empty() || options.password.empty()) {
      return absl::InvalidArgumentError(
          "Kafka SASL: a username and a password are required");
    }
  }
  if (options.message_timeout < absl::Milliseconds(1) ||
      options.message_timeout > absl::Hours(24 * 24)) {
    return absl::InvalidArgumentError(
        "Kafka: the message timeout must be 1 ms..24 days");
  }
  if (options.max_in_flight == 0 || options.max_in_flight > 10000000) {
    return absl::InvalidArgumentError(
        "Kafka: max_in_flight must be 1..10000000");
  }
  return absl::OkStatus();
}

absl::StatusOr<rd_kafka_conf_t*> NewKafkaConf(const KafkaOptions& options) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (conf == nullptr) {
    return absl::ResourceExhaustedError("Kafka: out of memory");
  }
  rd_kafka_conf_set_log_cb(conf, &DropLog);
  for (const Setting& setting : Settings(options)) {
    absl::Status applied = Apply(conf, setting);
    if (!applied.ok()) {
      rd_kafka_conf_destroy(conf);
      return applied;
    }
  }
  return conf;
}

}  // namespace outbox
