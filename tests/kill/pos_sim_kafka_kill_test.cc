// Copyright (c) edge-outbox authors.
//
// The SIGKILL soak of pos_sim_kill_test.cc (same runs, same invariant, same
// named checks, kills counted per phase) with the events going to Kafka:
// librdkafka's mock cluster (in this process, on loopback; it outlives
// every killed simulator) and a consumer (tools/recorder/kafka_recorder.h)
// that logs every record of the topic in outbox-sink's format, which the
// delivery audit reads. A record counts as answered 2xx when it is in the
// topic's log; resends are recognised by their `event-id` header. The key
// is the till, so one partition holds a till's sales and FIFO is checked in
// offset order. Kafka carries no signatures, so the audit does not ask for
// them.
//
// The brokers misbehave meanwhile: every 400 ms the next
// ProduceRequest is refused with a retriable error (librdkafka's idempotent
// producer retries it itself, in order, without duplicates), and every 3 s
// one broker answers its next ProduceRequest a second late (written at
// once, answered late: a kill in that second leaves a record the agent
// never heard of, sent again under its id). Brokers are not taken down
// here: the mock cluster brings a broker up again on its old port and
// aborts the process if another socket took the port meanwhile, which a
// soak of hundreds of outages hits (agent_kafka_test.cc covers brokers
// down). `make test` runs 25 kills (OUTBOX_KILL_SOAK_KILLS overrides; the
// `soak` ctest entry sets 500).

#include <atomic>
#include <fstream>
#include <iostream>
#include <string>

#include "gtest/gtest.h"
#include "tests/kill/pos_sim_kill_fixture.h"
#include "tests/testing/kafka_cluster.h"
#include "tests/testing/status.h"
#include "tools/recorder/kafka_recorder.h"

namespace outbox::testing {
namespace {

constexpr char kTopic[] = "pos.sale.created";
constexpr int kPartitions = 3;

std::string WriteKafkaAgentConfig(const std::string& dir,
                                  const std::string& bootstrap_servers) {
  const std::string path = dir + "/agent.textproto";
  // The retry and probe delays of the webhook soak; a message timeout well
  // above a late answer.
  std::ofstream(path) << "destinations {\n"
                      << "  name: \"stream\"\n"
                      << "  kafka {\n"
                      << "    bootstrap_servers: \"" << bootstrap_servers
                      << "\"\n"
                      << "    topic: \"pos.{type}\"\n"
                      << "    message_timeout: \"5s\"\n"
                      << "  }\n"
                      << "}\n"
                      << "routes { event_type: \"*\" destination: \"stream\" }\n"
                      << "retry { base_delay: \"20ms\" max_delay: \"200ms\" }\n"
                      << "agent { probe_interval_min: \"50ms\" "
                      << "probe_interval_max: \"300ms\" }\n";
  return path;
}

TEST_F(PosSimKillTest,
       KafkaAcknowledgedSalesAreDeliveredOnceInOrderUnderSigkill) {
  auto cluster = MockKafkaCluster::Start(/*brokers=*/3);
  ASSERT_OUTBOX_OK(cluster);
  ASSERT_OUTBOX_OK((*cluster)->CreateTopic(kTopic, kPartitions));
  const std::string log = dir_ + "/recorder.log";
  auto recorder = recorder::KafkaRecorder::Start(
      (*cluster)->bootstrap_servers(), kTopic, kPartitions, log);
  ASSERT_OUTBOX_OK(recorder);
  std::atomic<int> refused{0}, late{0};
  {
    // The broker trouble of the top of the file, a tick every 100 ms.
    int tick = 0;  // the thread's own
    MockKafkaCluster* mock = cluster->get();
    Periodically trouble(absl::Milliseconds(100), [&] {
      if (++tick % 4 == 0) {
        mock->FailNextProduces({RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS});
        ++refused;
      }
      if (tick % 30 == 0) {
        mock->DelayNextProduceAnswer(1 + (tick / 30) % 3, absl::Seconds(1));
        ++late;
      }
      return true;
    });
    SoakAndAudit(
        WriteKafkaAgentConfig(dir_, (*cluster)->bootstrap_servers()), log,
        /*default_kills=*/25, /*signed_requests=*/false);
  }
  std::cout << "[kill soak] brokers: " << refused
            << " produce requests refused (retriable), " << late
            << " answered 1 s late" << std::endl;
  EXPECT_GT(refused, 0);
  EXPECT_OUTBOX_OK((*recorder)->status());
}

}  // namespace
}  // namespace outbox::testing
