// Copyright (c) edge-outbox authors.
//
// librdkafka's mock cluster (rdkafka_mock.h, part of librdkafka itself):
// Kafka brokers in this process, on loopback ports, that speak the Kafka
// protocol, idempotence included. The cluster a Kafka recorder
// (kafka_recorder.h) reads from: for outbox-demo --transport kafka and the
// Kafka tests, which also make it misbehave.

#ifndef OUTBOX_TOOLS_RECORDER_MOCK_KAFKA_CLUSTER_H_
#define OUTBOX_TOOLS_RECORDER_MOCK_KAFKA_CLUSTER_H_

#include <librdkafka/rdkafka.h>
// Included after rdkafka.h, as it demands.
#include <librdkafka/rdkafka_mock.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace outbox::recorder {

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
  // Every broker answers every request `rtt` after it came (librdkafka's
  // broker round-trip time; zero, the default, answers at once).
  // Errors: kInternal naming librdkafka's code.
  absl::Status SetRoundTrip(absl::Duration rtt);
  // Broker `broker_id` writes the next ProduceRequest at once but sends its
  // answer only `delay` later.
  void DelayNextProduceAnswer(int32_t broker_id, absl::Duration delay);

 private:
  MockKafkaCluster(rd_kafka_t* rk, rd_kafka_mock_cluster_t* cluster)
      : rk_(rk), cluster_(cluster) {}

  rd_kafka_t* rk_;  // the handle the mock cluster keeps its books on
  rd_kafka_mock_cluster_t* cluster_;
};

}  // namespace outbox::recorder

#endif  // OUTBOX_TOOLS_RECORDER_MOCK_KAFKA_CLUSTER_H_
