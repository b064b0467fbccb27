// Copyright (c) edge-outbox authors.
//
// For the Kafka producer's tests (platform/kafka_producer_test.cc): a
// consumer that reads back a topic's whole log, and a loop that drives a
// KafkaProducer from its fd the way the agent's poller would. The mock
// cluster they run against (librdkafka's rdkafka_mock.h) is
// tools/recorder/mock_kafka_cluster.h, which this header brings along.

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
#include "tools/recorder/mock_kafka_cluster.h"

namespace outbox::testing {

using recorder::ConsumedMessage;
using recorder::MockKafkaCluster;

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
