// Copyright (c) edge-outbox authors.
//
// What each Kafka delivery report means (docs/transports.md's Kafka table),
// from librdkafka's error code (platform's KafkaDeliveryStatus) through the
// sender's result to the agent's decision, with no cluster: librdkafka's
// mock cluster creates a topic a producer asks for, so a missing topic
// (held until it exists, not an attempt) is covered here; the others also
// go through the mock cluster in agent_kafka_test.

#include "agent/send/kafka_sender.h"

#include <librdkafka/rdkafka.h>

#include "agent/decision.h"
#include "gtest/gtest.h"
#include "platform/kafka_producer.h"
#include "platform/kafka_status.h"
#include "tests/testing/decision_of.h"

namespace outbox {
namespace {

Decision DecisionFor(rd_kafka_resp_err_t err) {
  KafkaResult r;
  r.error_code = err;
  r.status = KafkaDeliveryStatus(err);
  return testing::DecisionOf(
      SendResultFromKafka(r, /*cluster=*/absl::OkStatus(), /*fatal=*/false));
}

TEST(KafkaSenderTest, EachDeliveryReportMeansWhatTheTableSays) {
  EXPECT_EQ(DecisionFor(RD_KAFKA_RESP_ERR_NO_ERROR).kind,
            Decision::Kind::kDelivered);
  // The record is refused for good: resending cannot help.
  EXPECT_EQ(DecisionFor(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE).kind,
            Decision::Kind::kDeadLetter);
  // This client is refused, not the record.
  EXPECT_EQ(DecisionFor(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED).kind,
            Decision::Kind::kHoldDestination);
  // Timed out with the cluster reachable: the broker may have it.
  EXPECT_EQ(DecisionFor(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT).kind,
            Decision::Kind::kRetry);
}

TEST(KafkaSenderTest, AMissingTopicHoldsTheEventWithoutAnAttempt) {
  for (rd_kafka_resp_err_t err : {RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC,
                                  RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART}) {
    const Decision d = DecisionFor(err);
    EXPECT_EQ(d.kind, Decision::Kind::kOffline) << rd_kafka_err2str(err);
    EXPECT_NE(d.error.find("until the topic exists"), std::string::npos)
        << d.error;
  }
}

}  // namespace
}  // namespace outbox
