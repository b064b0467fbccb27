// Copyright (c) edge-outbox authors.

#include "platform/kafka_status.h"

#include <librdkafka/rdkafka.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

TEST(KafkaDeliveryStatusTest, NoErrorIsDelivered) {
  EXPECT_TRUE(KafkaDeliveryStatus(RD_KAFKA_RESP_ERR_NO_ERROR).ok());
}

TEST(KafkaDeliveryStatusTest, BadMessagesAreRejectedForGood) {
  for (rd_kafka_resp_err_t err :
       {RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, RD_KAFKA_RESP_ERR_INVALID_RECORD,
        RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE,
        RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION, RD_KAFKA_RESP_ERR__INVALID_ARG}) {
    EXPECT_EQ(KafkaDeliveryStatus(err).code(),
              absl::StatusCode::kInvalidArgument)
        << rd_kafka_err2name(err);
  }
}

TEST(KafkaDeliveryStatusTest, AuthorizationFailuresAreDenied) {
  EXPECT_EQ(
      KafkaDeliveryStatus(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED).code(),
      absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(KafkaDeliveryStatus(RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED)
                .code(),
            absl::StatusCode::kPermissionDenied);
}

// message.timestamp.difference.max.ms: the broker judges the device's clock,
// not the record. The caller holds the destination (fix the clock first).
TEST(KafkaDeliveryStatusTest, ARefusedTimestampIsTheClocksFault) {
  const absl::Status s =
      KafkaDeliveryStatus(RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("clock"));
}

TEST(KafkaDeliveryStatusTest, AMissingTopicIsNotFound) {
  EXPECT_EQ(KafkaDeliveryStatus(RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(KafkaDeliveryStatus(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART).code(),
            absl::StatusCode::kNotFound);
}

TEST(KafkaDeliveryStatusTest, TransientFailuresRetry) {
  for (rd_kafka_resp_err_t err :
       {RD_KAFKA_RESP_ERR__MSG_TIMED_OUT, RD_KAFKA_RESP_ERR__TIMED_OUT,
        RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
        RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
        RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_INVALID_MSG,
        RD_KAFKA_RESP_ERR__FATAL}) {
    EXPECT_EQ(KafkaDeliveryStatus(err).code(), absl::StatusCode::kUnavailable)
        << rd_kafka_err2name(err);
  }
}

TEST(KafkaDeliveryStatusTest, UnknownCodesRetry) {
  EXPECT_EQ(KafkaDeliveryStatus(9999).code(), absl::StatusCode::kUnavailable);
}

TEST(KafkaDeliveryStatusTest, ATimedOutMessageMayHaveBeenWritten) {
  const absl::Status status =
      KafkaDeliveryStatus(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT);
  EXPECT_THAT(status.message(), HasSubstr("_MSG_TIMED_OUT"));
  EXPECT_THAT(status.message(), HasSubstr("same event id"));
}

TEST(KafkaDeliveryStatusTest, PurgedMessagesAreCancelled) {
  EXPECT_EQ(KafkaDeliveryStatus(RD_KAFKA_RESP_ERR__PURGE_QUEUE).code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(KafkaDeliveryStatus(RD_KAFKA_RESP_ERR__PURGE_INFLIGHT).code(),
            absl::StatusCode::kCancelled);
}

TEST(KafkaDeliveryStatusTest, AFullQueueIsResourceExhausted) {
  EXPECT_EQ(KafkaDeliveryStatus(RD_KAFKA_RESP_ERR__QUEUE_FULL).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(KafkaClusterStatusTest, BrokersDownAreUnavailable) {
  const absl::Status status = KafkaClusterStatus(
      RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, "1/1 brokers are down");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("1/1 brokers are down"));
  EXPECT_THAT(status.message(), HasSubstr("_ALL_BROKERS_DOWN"));
}

TEST(KafkaClusterStatusTest, OpenSslErrorsOnTheWireAreTlsFailures) {
  EXPECT_EQ(KafkaClusterStatus(RD_KAFKA_RESP_ERR__TRANSPORT,
                               "ssl://b:9093/1: error:0A000086:SSL "
                               "routines::certificate verify failed")
                .code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(KafkaClusterStatus(RD_KAFKA_RESP_ERR__TRANSPORT,
                               "ssl://b:9093/1: Receive failed: "
                               "error:0A00045C:SSL routines::tlsv13 alert "
                               "certificate required")
                .code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(KafkaClusterStatusTest, LostConnectionsAreUnavailableEvenOverTls) {
  EXPECT_EQ(KafkaClusterStatus(RD_KAFKA_RESP_ERR__TRANSPORT,
                               "b:9092/1: Connect failed: Connection refused")
                .code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(KafkaClusterStatus(RD_KAFKA_RESP_ERR__TRANSPORT,
                               "ssl://b:9093/1: Receive failed: "
                               "error:0A000126:SSL routines::unexpected eof "
                               "while reading (after 1000ms in state "
                               "APIVERSION_QUERY)")
                .code(),
            absl::StatusCode::kUnavailable);
}

TEST(KafkaClusterStatusTest, TlsAndSaslFailuresNeedTheSettingsFixed) {
  EXPECT_EQ(KafkaClusterStatus(RD_KAFKA_RESP_ERR__SSL, "handshake").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(KafkaClusterStatus(RD_KAFKA_RESP_ERR__AUTHENTICATION, "bad").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(KafkaClusterStatus(RD_KAFKA_RESP_ERR__FATAL, "epoch").code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace outbox
