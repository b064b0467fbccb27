// Copyright (c) edge-outbox authors.
//
// An agent built without MQTT or without Kafka (OUTBOX_WITH_MQTT or
// OUTBOX_WITH_KAFKA off, as in the cross builds): a destination of the
// missing kind is refused when the agent is created, with a message that
// names the destination and how to build an agent that has it, and the
// events bound for it are left pending as they were. Built only in such
// builds (tests/agent/CMakeLists.txt); each kind's test only without it.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "tests/testing/status.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;
using testing::MakeEvent;

class AgentWithoutBrokersTest : public testing::StoreTest {
 protected:
  // Creates an agent on `config` after committing an event of type "sale":
  // expects kFailedPrecondition with a message holding each of `phrases`,
  // and the event still pending with no attempt.
  void ExpectRefused(const std::string& config,
                     const std::vector<std::string>& phrases) {
    const std::string id = CommitEvent(MakeEvent("sale"));
    AgentOptions options;
    options.config_text = config;
    options.clock = &clock_;
    absl::StatusOr<std::unique_ptr<Agent>> agent =
        Agent::Create(store_.get(), std::move(options));
    ASSERT_FALSE(agent.ok()) << "an agent without the sender was created";
    EXPECT_EQ(agent.status().code(), absl::StatusCode::kFailedPrecondition)
        << agent.status();
    for (const std::string& phrase : phrases) {
      EXPECT_THAT(agent.status().message(), HasSubstr(phrase));
    }
    absl::StatusOr<PendingEvent> pending = store_->FindPending(id);
    ASSERT_OUTBOX_OK(pending);
    EXPECT_EQ(pending->attempts, 0u);
  }
};

#if !OUTBOX_TEST_HAS_MQTT
constexpr char kMqttConfig[] = R"(
  destinations { name: "web" url: "http://127.0.0.1:9/" }
  destinations {
    name: "fleet"
    mqtt {
      broker: "mqtt://127.0.0.1:1883"
      client_id: "till-7"
      topic: "fleet/{device}/events/{type}"
    }
  }
  routes { event_type: "*" destination: "fleet" }
)";

TEST_F(AgentWithoutBrokersTest, MqttDestinationIsRefusedSayingHowToBuildIt) {
  ExpectRefused(kMqttConfig, {"destination fleet ", "built without MQTT",
                              "-DOUTBOX_WITH_MQTT=ON", "libmosquitto-dev"});
}
#endif

#if !OUTBOX_TEST_HAS_KAFKA
constexpr char kKafkaConfig[] = R"(
  destinations { name: "web" url: "http://127.0.0.1:9/" }
  destinations {
    name: "stream"
    kafka { bootstrap_servers: "127.0.0.1:9092" topic: "pos.{type}" }
  }
  routes { event_type: "*" destination: "stream" }
)";

TEST_F(AgentWithoutBrokersTest, KafkaDestinationIsRefusedSayingHowToBuildIt) {
  ExpectRefused(kKafkaConfig, {"destination stream ", "built without Kafka",
                               "-DOUTBOX_WITH_KAFKA=ON", "librdkafka-dev"});
}
#endif

}  // namespace
}  // namespace outbox
