// Copyright (c) edge-outbox authors.
//
// The delivery agent producing to librdkafka's mock cluster (in-process
// brokers on loopback), read back by a consumer: key and headers, FIFO per
// ordering key, brokers down (not attempts, held, delivered once they are
// back), a clock known to be wrong (held), a permanent broker error
// (dead-lettered), a retriable one (written once). Waits are bounded only to
// catch hangs; nothing asserts on how fast anything was.

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/kafka_cluster.h"
#include "tests/testing/shifted_clock.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using testing::ConsumedMessage;
using testing::MockKafkaCluster;
using testing::PayloadN;

class AgentKafkaTest : public testing::AgentSinkTest {
 protected:
  static constexpr char kTopic[] = "pos.sale";

  void SetUp() override {
    AgentSinkTest::SetUp();
    auto cluster = MockKafkaCluster::Start();
    ASSERT_OUTBOX_OK(cluster);
    cluster_ = std::move(*cluster);
    ASSERT_OUTBOX_OK(cluster_->CreateTopic(kTopic, kPartitions));
  }

  // Destination "stream" on the mock cluster, every type routed to it.
  // `agent_extra` goes inside the `agent` block.
  std::string KafkaConfig(const std::string& agent_extra = "") const {
    return absl::StrCat(R"(
      destinations {
        name: "stream"
        kafka {
          bootstrap_servers: ")",
                        cluster_->bootstrap_servers(), R"("
          topic: "pos.{type}"
          message_timeout: "2s"
        }
      }
      routes { event_type: "*" destination: "stream" }
      retry { base_delay: "50ms" max_delay: "400ms" }
      agent { probe_interval_min: "100ms" probe_interval_max: "500ms" )",
                        agent_extra, R"( }
    )");
  }

  std::vector<ConsumedMessage> Log() {
    auto got =
        testing::ReadTopic(cluster_->bootstrap_servers(), kTopic, kPartitions);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::vector<ConsumedMessage>();
  }

  // With the cluster's next produces failing with an error that refuses
  // this device (not the records): a drain delivers `ids` in the end, each
  // once, none dead-lettered nor counted as an attempt, and one
  // destination_refused record says why (`mentions`).
  void ExpectHeldOnceThenDelivered(const std::vector<std::string>& ids,
                                   const std::string& mentions) {
    auto agent = MakeAgent(KafkaConfig());
    ASSERT_NE(agent, nullptr);
    EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
    EXPECT_EQ(agent->stats().dead_lettered, 0u);
    EXPECT_EQ(agent->stats().retries_scheduled, 0u);
    // The first answer, then any probe refused while librdkafka still
    // remembers the error.
    EXPECT_GE(agent->stats().refused_results, 1u);
    int refused = 0;
    for (const LogRecord& r : agent_log_) {
      if (r.event != LogEvent::kDestinationRefused) continue;
      ++refused;
      EXPECT_NE(r.message.find(mentions), std::string::npos) << r.message;
    }
    EXPECT_EQ(refused, 1);
    EXPECT_EQ(store_->GetStats()->dead_letters, 0u);
    std::vector<std::string> got;
    for (const ConsumedMessage& m : Log()) got.push_back(m.Header("event-id"));
    // Unkeyed: each once, in no promised order.
    EXPECT_THAT(got, ::testing::UnorderedElementsAreArray(ids));
  }

  static constexpr int kPartitions = 4;
  std::unique_ptr<MockKafkaCluster> cluster_;
};

TEST_F(AgentKafkaTest, EventsArriveWithTheirKeyAndHeaders) {
  const std::vector<std::string> ids = CommitEvents(3, /*keys=*/1, "sale");
  auto agent = MakeAgent(KafkaConfig());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  const std::vector<ConsumedMessage> got = Log();
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(got[i].has_key);
    EXPECT_EQ(got[i].key, "k0");
    EXPECT_EQ(got[i].Header("event-id"), ids[i]);
    EXPECT_EQ(got[i].Header("event-type"), "sale");
    EXPECT_EQ(got[i].Header("content-type"), "application/json");
    EXPECT_EQ(PayloadN(got[i].payload), static_cast<int>(i));
  }
  EXPECT_EQ(agent->stats().delivered, 3u);
}

TEST_F(AgentKafkaTest, EachKeysEventsArriveInCommitOrder) {
  CommitEvents(200, /*keys=*/5);
  auto agent = MakeAgent(KafkaConfig());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  std::map<std::string, int> last;
  size_t records = 0;
  for (const ConsumedMessage& m : Log()) {
    const int n = PayloadN(m.payload);
    EXPECT_GT(n, last.count(m.key) ? last[m.key] : -1) << m.key;
    last[m.key] = n;
    ++records;
  }
  EXPECT_EQ(last.size(), 5u);
  EXPECT_EQ(records, 200u);
}

// Down for longer than message_timeout: what librdkafka held times out while
// the cluster is unreachable, and that is not an attempt either.
TEST_F(AgentKafkaTest, BrokersDownAreNotAttemptsAndDeliverOnceTheyAreBack) {
  cluster_->SetBrokersDown();
  const std::vector<std::string> ids = CommitEvents(3, /*keys=*/1);
  auto agent = MakeAgent(KafkaConfig());
  ASSERT_NE(agent, nullptr);
  // Until the agent sees the destination unreachable, then past a message
  // timeout (2 s at 50 ms a round).
  for (int i = 0; i < 2000 && !agent->stats().offline; ++i) {
    ASSERT_OUTBOX_OK(agent->Drain());
    absl::SleepFor(absl::Milliseconds(50));
  }
  for (int i = 0; i < 80; ++i) {
    ASSERT_OUTBOX_OK(agent->Drain());
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(agent->stats().offline);
  EXPECT_GE(agent->stats().offline_results, 1u);
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);  // not attempts
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 3u);
  bool logged = false;
  for (const LogRecord& r : agent_log_) {
    logged |= r.event == LogEvent::kDestinationUnreachable;
  }
  EXPECT_TRUE(logged);

  cluster_->SetBrokersUp();
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  std::vector<std::string> got;
  for (const ConsumedMessage& m : Log()) got.push_back(m.Header("event-id"));
  EXPECT_EQ(got, ids);
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);
}

// The cluster's ACLs refuse this client, not the record: held, as for an
// HTTP 403, with one probe at a time; the probe that the cluster accepts
// delivers it, and nothing was dead-lettered or counted as an attempt.
TEST_F(AgentKafkaTest, AnAuthorizationErrorHoldsTheDestinationThenDelivers) {
  cluster_->FailNextProduces({RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED});
  ExpectHeldOnceThenDelivered(CommitEvents(1), "ACLs do not let");
}

// A broker with message.timestamp.difference.max.ms refuses a record whose
// timestamp is too far from its clock: a verdict on the device's clock, not
// on the event, so the destination is held as for an authorization error
// and nothing is dead-lettered (else a wrong clock empties the queue).
TEST_F(AgentKafkaTest, ATimestampRefusalHoldsTheDestinationThenDelivers) {
  cluster_->FailNextProduces({RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP,
                              RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP});
  ExpectHeldOnceThenDelivered(CommitEvents(3), "clock is wrong");
}

TEST_F(AgentKafkaTest, PermanentBrokerErrorDeadLettersWithTheReason) {
  cluster_->FailNextProduces({RD_KAFKA_RESP_ERR_INVALID_RECORD});
  CommitEvents(1);
  auto agent = MakeAgent(KafkaConfig());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(agent->stats().dead_lettered, 1u);
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 1u);
  // As outboxctl shows it: the broker's answer, named once.
  EXPECT_EQ((*dead)[0].reason.rfind("Kafka: Broker: ", 0), 0u)
      << (*dead)[0].reason;
  EXPECT_EQ((*dead)[0].event.last_error, (*dead)[0].reason);
  EXPECT_EQ((*dead)[0].event.last_http_status, 0);
  EXPECT_NE((*dead)[0].reason.find("rejected"), std::string::npos)
      << (*dead)[0].reason;
  EXPECT_TRUE(Log().empty());
}

TEST_F(AgentKafkaTest, RetriableBrokerErrorIsWrittenOnce) {
  cluster_->FailNextProduces({RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS});
  const std::vector<std::string> ids = CommitEvents(1);
  auto agent = MakeAgent(KafkaConfig());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(agent->stats().delivered, 1u);
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);  // librdkafka retried
  const std::vector<ConsumedMessage> got = Log();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].Header("event-id"), ids[0]);
}

// A sequence number the broker refuses is fatal to an idempotent producer:
// it would refuse every event from then on. The agent replaces it; what was
// in flight is sent again under its id, and the rest follow.
TEST_F(AgentKafkaTest, ProducerFailingFatallyIsReplacedAndNothingIsLost) {
  std::vector<std::string> ids = CommitEvents(1, /*keys=*/1);
  auto agent = MakeAgent(KafkaConfig());
  ASSERT_NE(agent, nullptr);
  ASSERT_EQ(DrainUntilEmpty(agent.get()), 0u);
  cluster_->FailNextProduces({RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER});
  for (const std::string& id : CommitEvents(4, /*keys=*/1)) ids.push_back(id);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(agent->stats().delivered, 5u);
  EXPECT_EQ(agent->stats().dead_lettered, 0u);
  EXPECT_GE(agent->stats().retries_scheduled, 1u);  // the refused one
  std::vector<std::string> first_seen;
  std::set<std::string> seen;
  for (const ConsumedMessage& m : Log()) {
    const std::string id = m.Header("event-id");
    if (seen.insert(id).second) first_seen.push_back(id);
  }
  EXPECT_EQ(first_seen, ids);  // each id, in commit order
}

// A record carries the clock's time, which a broker may check
// (docs/transports.md, "A clock the receiver would refuse"): with the clock
// six years behind the store's newest time (a board that booted without an
// RTC) nothing is produced and nothing counts as an attempt; once the clock
// is right the events go, in order.
TEST_F(AgentKafkaTest, AClockSixYearsBackProducesNothingThenDeliversOnceRight) {
  const std::vector<std::string> ids = CommitEvents(3, /*keys=*/1);
  testing::ShiftedClock clock(-absl::Hours(6 * 365 * 24));
  auto agent = MakeAgent(KafkaConfig(), &clock);
  ASSERT_NE(agent, nullptr);
  auto pending = agent->Drain();
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, 3u);
  EXPECT_EQ(agent->stats().requests, 0u);
  EXPECT_TRUE(Log().empty()) << "produced with a stale timestamp";
  for (const std::string& id : ids) {
    auto e = store_->FindPending(id);
    ASSERT_OUTBOX_OK(e);
    EXPECT_EQ(e->attempts, 0u) << id;
  }
  EXPECT_EQ(Logged(LogEvent::kClockUntrusted), 1);

  clock.Shift(absl::ZeroDuration());  // NTP sets it right
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  std::vector<std::string> got;
  for (const ConsumedMessage& m : Log()) got.push_back(m.Header("event-id"));
  EXPECT_EQ(got, ids);
}

TEST_F(AgentKafkaTest, MetricsNameTheDestinationsKind) {
  const std::string path = dir_.Sub("outbox.prom");
  auto agent =
      MakeAgent(KafkaConfig(absl::StrCat("metrics_file: \"", path, "\"")));
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->Drain());  // writes the metrics file
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(
      text.find(
          "outbox_destination_info{destination=\"stream\",kind=\"kafka\"} 1"),
      std::string::npos)
      << text;
}

TEST_F(AgentKafkaTest, ATypeThatMakesNoTopicIsDeadLetteredUnsent) {
  CommitEvents(1, 0, "sale/created");
  auto agent = MakeAgent(KafkaConfig());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_NE((*dead)[0].reason.find("cannot be sent"), std::string::npos)
      << (*dead)[0].reason;
}

}  // namespace
}  // namespace outbox
