// Copyright (c) edge-outbox authors.
//
// For the Kafka producer's tests (platform/kafka_producer_test.cc):
// librdkafka's mock cluster (rdkafka_mock.h: in-process brokers on
// loopback ports that speak the Kafka protocol, idempotence included), a
// consumer that reads back a topic's whole log, and a loop that drives a
// KafkaProducer from its fd the way the agent's poller would.

#ifndef OUTBOX_TESTS_TESTING_KAFKA_CLUSTER_H_
#define OUTBOX_TESTS_TESTING_KAFKA_CLUSTER_H_

#include <librdkafka/rdkafka.h>
// Included after rdkafka.h, as it demands.
#include <librdkafka/rdkafka_mock.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/kafka_producer.h"
#include "tools/recorder/kafka_recorder.h"

namespace outbox::testing {

// REQUIRES: External synchronization. The brokers run on librdkafka's
// threads until the cluster is destroyed.
class MockKafkaCluster {
 public:
  // Starts `brokers` mock brokers (ids 1..brokers). Errors: kInternal.
  static absl::StatusOr<std::unique_ptr<MockKafkaCluster>> Start(
      int brokers = 1);
  ~MockKafkaCluster();

  std::string bootstrap_servers() const;
  // Errors: kInternal naming librdkafka's code.
  absl::Status CreateTopic(const std::string& topic, int partitions);
  // Closes every connection and refuses new ones / accepts them again.
  void SetBrokersDown();
  void SetBrokersUp();
  // The next errors.size() ProduceRequests are answered with these codes
  // (one each, in order) instead of being written.
  void FailNextProduces(const std::vector<rd_kafka_resp_err_t>& errors);
  // Broker `broker_id` writes the next ProduceRequest at once but sends its
  // answer only `delay` later.
  void DelayNextProduceAnswer(int32_t broker_id, absl::Duration delay);

 private:
  MockKafkaCluster(rd_kafka_t* rk, rd_kafka_mock_cluster_t* cluster)
      : rk_(rk), cluster_(cluster) {}

  rd_kafka_t* rk_;  // the handle the mock cluster keeps its books on
  rd_kafka_mock_cluster_t* cluster_;
};

using recorder::ConsumedMessage;

// Everything the log of `topic` (partitions 0..partitions-1) holds now, in
// partition then offset order, read from the beginning by a consumer.
// Errors: kDeadlineExceeded after `timeout` (a hang guard), kInternal.
absl::StatusOr<std::vector<ConsumedMessage>> ReadTopic(
    const std::string& bootstrap_servers, const std::string& topic,
    int partitions, absl::Duration timeout = absl::Seconds(30));

// Calls producer->Process() whenever its fd is readable (waiting in a
// Poller), appending the results to `*results`, until `done()` holds (true)
// or `timeout` passes (false; a hang guard, not a measurement).
bool DriveUntil(KafkaProducer* producer, std::vector<KafkaResult>* results,
                const std::function<bool()>& done,
                absl::Duration timeout = absl::Seconds(30));

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_KAFKA_CLUSTER_H_
