// Copyright (c) edge-outbox authors.
//
// KafkaProducer: produces events to Kafka from the agent's one thread, on
// librdkafka (Debian's librdkafka-dev, C API), without blocking. librdkafka
// runs its own broker threads; every callback of ours (delivery reports,
// errors) runs inside Process(), on the caller's thread.
//
// Shaped like MqttPublisher (platform/mqtt_publisher.h): one pollable fd(),
// Process() when it is readable, each message's outcome reported once by
// its tag. Built only when CMake finds librdkafka (OUTBOX_WITH_KAFKA); the
// agent's Kafka destinations use it (agent/send/kafka_sender.h).
//
// Guarantees:
//   - the producer is idempotent (enable.idempotence=true, acks=all): a
//     message is reported OK only when all in-sync replicas have it, and
//     librdkafka's own retries (of a lost connection, of a retriable broker
//     error) never write it twice nor reorder a partition;
//   - messages with the same key go to the same partition, in the order
//     Produce() was called (the default partitioner hashes the key);
//   - while every broker is down librdkafka holds the messages and sends
//     them once one is back, until message_timeout has passed since
//     Produce(); then each is reported kUnavailable (__MSG_TIMED_OUT: it may
//     or may not have been written; send it again with the same event id).
//     connection_status() says kUnavailable meanwhile, so the caller can
//     count those failures as "unreachable", not as attempts;
//   - AbandonAll() and the destructor purge what is unsent or unanswered
//     and return at once, reporting each such message kCancelled.
// The password, keys and payloads never appear in statuses; librdkafka's
// log lines are dropped (its default logger writes them to stderr).

#ifndef OUTBOX_PLATFORM_KAFKA_PRODUCER_H_
#define OUTBOX_PLATFORM_KAFKA_PRODUCER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "outbox/http_transport.h"

namespace outbox {

// Kafka's security.protocol.
enum class KafkaSecurity { kPlaintext, kSsl, kSaslPlaintext, kSaslSsl };

struct KafkaOptions {
  // Required: "host:port[,host:port...]", the brokers to ask for the
  // cluster's metadata first.
  std::string bootstrap_servers;
  // Shown in the brokers' logs and quotas. Default: "edge-outbox".
  std::string client_id = "edge-outbox";
  KafkaSecurity security = KafkaSecurity::kPlaintext;
  // The CA, client certificate and verification settings for kSsl and
  // kSaslSsl (the HTTP transport's, outbox/http_transport.h); give at most
  // one of ca_file and ca_dir. Both empty: the system's CA store.
  TlsOptions tls;
  // For kSaslPlaintext and kSaslSsl: "PLAIN", "SCRAM-SHA-256" or
  // "SCRAM-SHA-512", and the credentials (both required). The caller reads
  // the password from a private file; it is never shown in statuses.
  std::string sasl_mechanism = "PLAIN";
  std::string username;
  std::string password;
  // How long librdkafka keeps trying a message (a broker down, retriable
  // errors) before reporting it __MSG_TIMED_OUT. Default: 5 minutes.
  absl::Duration message_timeout = absl::Minutes(5);
  // librdkafka's compression.codec ("none", "gzip", "snappy", "lz4",
  // "zstd"). Default: "none".
  std::string compression = "none";
  // Most messages awaiting their delivery report. Default: 1000.
  size_t max_in_flight = 1000;
  // Tests only: when > 0, librdkafka's socket.timeout.ms, how long a
  // broker may take to answer a request before librdkafka gives up on it
  // (and sends a produce request again). Default: 0 (librdkafka's 60 s).
  absl::Duration TEST_socket_timeout = absl::ZeroDuration();
};

// One event to produce.
struct KafkaMessage {
  uint64_t tag = 0;  // returned in KafkaResult::tag
  std::string topic;
  // The ordering key: messages with one key keep their order. Empty: a
  // null key (librdkafka spreads such messages over the partitions).
  std::string key;
  std::string payload;
  // Headers "event-id", "event-type" and "content-type" (each omitted when
  // empty).
  std::string event_id;
  std::string event_type;
  std::string content_type;
};

struct KafkaResult {
  uint64_t tag = 0;
  // OK: written to all in-sync replicas. Otherwise KafkaDeliveryStatus
  // (platform/kafka_status.h), or kCancelled after AbandonAll().
  absl::Status status;
  int error_code = 0;  // the delivery report's rd_kafka_resp_err_t
};

// REQUIRES: External synchronization. Meant to be driven by one thread.
class KafkaProducer {
 public:
  // Checks the options and starts librdkafka, which connects in the
  // background. Errors: kInvalidArgument (no bootstrap servers, half a
  // client certificate pair, SASL without credentials or with another
  // mechanism, both CA settings, a bad timeout, max_in_flight 0),
  // kFailedPrecondition (TLS files unusable, a feature librdkafka was built
  // without), kResourceExhausted (no descriptors or memory).
  static absl::StatusOr<std::unique_ptr<KafkaProducer>> Create(
      KafkaOptions options);

  // Purges what is still in flight (as AbandonAll(), without reporting) and
  // stops librdkafka's threads; does not wait for deliveries.
  virtual ~KafkaProducer() = default;

  // OK unless the last word from the cluster was a failure:
  // kUnavailable while all brokers are down (__ALL_BROKERS_DOWN);
  // kFailedPrecondition for a TLS or SASL failure (__SSL, __AUTHENTICATION,
  // an OpenSSL error reported as __TRANSPORT: fix the settings; see
  // KafkaClusterStatus in platform/kafka_status.h) or a fatal idempotence
  // error (__FATAL: create a new producer). librdkafka announces no broker
  // coming back, so the status stays until the next delivery succeeds.
  virtual absl::Status connection_status() const = 0;

  // Whether the producer hit a fatal idempotence error (__FATAL: the
  // broker and the producer disagree on its sequence numbers). It then
  // refuses every message and delivers none of those in flight: the caller
  // must abandon them and create a new producer, which gets a new producer
  // id and sends them again.
  virtual bool failed_fatally() const = 0;

  // Readable whenever Process() has delivery reports or errors to serve,
  // until Process() runs. Valid for the life of the producer; the caller
  // must not read or close it.
  virtual int fd() const = 0;

  // Serves librdkafka's reports without blocking and appends the messages
  // that finished. Harmless when fd() is not readable.
  virtual void Process(std::vector<KafkaResult>* done) = 0;

  // Queues `message` (copied) and returns; after OK exactly one
  // KafkaResult with its tag follows from Process(). Errors (no result
  // follows): kResourceExhausted (max_in_flight messages await their
  // reports), kInvalidArgument (no topic, a message larger than the
  // brokers take), kNotFound (the cluster said the topic does not exist),
  // kFailedPrecondition (the producer hit a fatal error: create a new one).
  virtual absl::Status Produce(const KafkaMessage& message) = 0;

  // Messages awaiting their delivery report.
  virtual size_t InFlight() const = 0;

  // Purges every message in flight and appends them all: those whose report
  // was already waiting as it says, the rest kCancelled (one already sent
  // may or may not have been written). The producer stays usable.
  virtual void AbandonAll(std::vector<KafkaResult>* done) = 0;
};

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_KAFKA_PRODUCER_H_
