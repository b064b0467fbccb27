// Copyright (c) edge-outbox authors.
//
// What each PUBACK means (docs/transports.md's PUBACK table), from the
// broker's reason code (platform's PubackStatus) through the sender's
// result to the agent's decision, with no broker: the codes a real
// mosquitto will not send on demand (0x90, 0x99) are covered here; 0x87 and
// success also go through the real broker in agent_mqtt_test.

#include "agent/send/mqtt_sender.h"

#include "agent/decision.h"
#include "gtest/gtest.h"
#include "platform/mqtt_publisher.h"
#include "platform/mqtt_status.h"
#include "tests/testing/decision_of.h"

namespace outbox {
namespace {

Decision::Kind DecisionFor(int reason_code) {
  MqttResult r;
  r.reason_code = reason_code;
  r.status = PubackStatus(reason_code);
  return testing::DecisionOf(SendResultFromMqtt(r)).kind;
}

TEST(MqttSenderTest, EachPubackMeansWhatTheTableSays) {
  EXPECT_EQ(DecisionFor(0x00), Decision::Kind::kDelivered);
  EXPECT_EQ(DecisionFor(0x10), Decision::Kind::kDelivered);  // no subscriber
  // The event itself is wrong: resending cannot help.
  EXPECT_EQ(DecisionFor(0x90), Decision::Kind::kDeadLetter);
  EXPECT_EQ(DecisionFor(0x99), Decision::Kind::kDeadLetter);
  // This client is refused, not the event.
  EXPECT_EQ(DecisionFor(0x87), Decision::Kind::kHoldDestination);
  for (int code : {0x80, 0x83, 0x91, 0x97}) {
    EXPECT_EQ(DecisionFor(code), Decision::Kind::kRetry) << code;
  }
}

TEST(MqttSenderTest, NoPubackIsAnAnswerLostNotARefusal) {
  MqttResult r;
  r.reason_code = -1;
  r.status = absl::UnavailableError("connection lost");
  const SendResult s = SendResultFromMqtt(r);
  EXPECT_FALSE(s.transport.ok());
  EXPECT_EQ(s.reason_code, -1);
}

}  // namespace
}  // namespace outbox
