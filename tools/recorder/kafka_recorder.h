// Copyright (c) edge-outbox authors.
//
// Reading what reached a Kafka topic, for tests and demos: a consumer that
// is no group member (it assigns partitions itself and commits nothing),
// the records it reads, and KafkaRecorder, which writes every record of a
// topic to a file in outbox-sink's request-log format
// (tools/sink/request_log.h) so that the delivery audit (tools/audit/)
// reads a Kafka delivery as it reads a webhook one.

#ifndef OUTBOX_TOOLS_RECORDER_KAFKA_RECORDER_H_
#define OUTBOX_TOOLS_RECORDER_KAFKA_RECORDER_H_

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/recorder/delivery_log.h"
#include "tools/sink/request_log.h"

namespace outbox::recorder {

// One record as a consumer sees it.
struct ConsumedMessage {
  int32_t partition = -1;
  int64_t offset = -1;
  bool has_key = false;  // false: a null key
  std::string key, payload;
  std::vector<std::pair<std::string, std::string>> headers;

  // The value of the first header called `name`, or "".
  std::string Header(const std::string& name) const;
};

struct KafkaConsumerDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using KafkaConsumer = std::unique_ptr<rd_kafka_t, KafkaConsumerDeleter>;

// A consumer of `bootstrap_servers` (plaintext). Errors: kInternal with
// librdkafka's message.
absl::StatusOr<KafkaConsumer> NewKafkaConsumer(
    const std::string& bootstrap_servers);

// Assigns partitions 0..partitions-1 of `topic` to `rk`, each read from its
// first record. Errors: kInternal naming librdkafka's code.
absl::Status AssignFromBeginning(rd_kafka_t* rk, const std::string& topic,
                                 int partitions);

ConsumedMessage ToConsumed(const rd_kafka_message_t& m);

// The sink-log record for a Kafka record: id and type from the `event-id`
// and `event-type` headers, content type from `content-type`, method
// "PRODUCE", path "topic/partition", status 200 (it is in the log, so it
// was delivered), no signature (Kafka carries none), body the payload.
// `duplicate` is left to the caller.
sink::LogRecord ToLogRecord(const std::string& topic,
                            const ConsumedMessage& message);

// Reads partitions 0..partitions-1 of `topic` from the beginning on a
// thread of its own, for as long as it lives, and appends a line per record
// to `log_path` (ToLogRecord; `duplicate` when the event id came before).
// Lines of one partition are in offset order. Thread-safe.
class KafkaRecorder {
 public:
  // Errors: the consumer's or the log's.
  static absl::StatusOr<std::unique_ptr<KafkaRecorder>> Start(
      const std::string& bootstrap_servers, const std::string& topic,
      int partitions, const std::string& log_path);
  ~KafkaRecorder();  // stops the thread; the log keeps what it wrote

  // Records logged so far.
  int64_t recorded() const { return recorded_.load(); }
  // The first log write that failed, or OK. A consumer's errors (a broker
  // down, a reconnect) are not: the consumer retries them itself.
  absl::Status status() { return log_->status(); }

 private:
  KafkaRecorder(KafkaConsumer consumer, std::string topic,
                std::unique_ptr<DeliveryLog> log)
      : consumer_(std::move(consumer)),
        topic_(std::move(topic)),
        log_(std::move(log)) {}

  void Run();
  void Log(const ConsumedMessage& message);

  KafkaConsumer consumer_;
  const std::string topic_;
  const std::unique_ptr<DeliveryLog> log_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> recorded_{0};
  std::thread thread_;
};

}  // namespace outbox::recorder

#endif  // OUTBOX_TOOLS_RECORDER_KAFKA_RECORDER_H_
