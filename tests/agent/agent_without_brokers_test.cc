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
  // Agent::Create's refusal of `config`, after an event of type "sale" was
  // committed; checks that the event is still pending and untouched.
  absl::Status RefusalOf(const std::string& config) {
    const std::string id = CommitEvent(MakeEvent("sale"));
    AgentOptions options;
    options.config_text = config;
    options.clock = &clock_;
    absl::StatusOr<std::unique_ptr<Agent>> agent =
        Agent::Create(store_.get(), std::move(options));
    EXPECT_FALSE(agent.ok()) << "an agent without the sender was created";
    absl::StatusOr<PendingEvent> pending = store_->FindPending(id);
    EXPECT_OUTBOX_OK(pending);
    if (pending.ok()) {
      EXPECT_EQ(pending->attempts, 0u);
    }
    return agent.ok() ? absl::OkStatus() : agent.status();
  }
};

#if !OUTBOX_TEST_HAS_MQTT
TEST_F(AgentWithoutBrokersTest, MqttDestinationIsRefusedSayingHowToBuildIt) {
  const absl::Status refused = RefusalOf(R"(
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
  )");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("destination fleet "));
  EXPECT_THAT(refused.message(), HasSubstr("built without MQTT"));
  EXPECT_THAT(refused.message(), HasSubstr("-DOUTBOX_WITH_MQTT=ON"));
  EXPECT_THAT(refused.message(), HasSubstr("libmosquitto-dev"));
}
#endif

#if !OUTBOX_TEST_HAS_KAFKA
TEST_F(AgentWithoutBrokersTest, KafkaDestinationIsRefusedSayingHowToBuildIt) {
  const absl::Status refused = RefusalOf(R"(
    destinations { name: "web" url: "http://127.0.0.1:9/" }
    destinations {
      name: "stream"
      kafka { bootstrap_servers: "127.0.0.1:9092" topic: "pos.{type}" }
    }
    routes { event_type: "*" destination: "stream" }
  )");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("destination stream "));
  EXPECT_THAT(refused.message(), HasSubstr("built without Kafka"));
  EXPECT_THAT(refused.message(), HasSubstr("-DOUTBOX_WITH_KAFKA=ON"));
  EXPECT_THAT(refused.message(), HasSubstr("librdkafka-dev"));
}
#endif

}  // namespace
}  // namespace outbox
