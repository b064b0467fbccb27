// Copyright (c) edge-outbox authors.

#include "platform/mqtt_status.h"

#include <mosquitto.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

TEST(PubackStatusTest, SuccessAndNoSubscribersCountAsDelivered) {
  EXPECT_TRUE(PubackStatus(0x00).ok());
  EXPECT_TRUE(PubackStatus(0x10).ok());
}

TEST(PubackStatusTest, RejectionsAreForGood) {
  EXPECT_EQ(PubackStatus(0x87).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(PubackStatus(0x90).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PubackStatus(0x99).code(), absl::StatusCode::kInvalidArgument);
}

TEST(PubackStatusTest, TransientFailuresRetry) {
  for (int code : {0x80, 0x83, 0x91, 0x97, 0xA0}) {
    EXPECT_EQ(PubackStatus(code).code(), absl::StatusCode::kUnavailable)
        << code;
  }
  EXPECT_THAT(PubackStatus(0x97).message(), HasSubstr("0x97"));
}

TEST(ConnackStatusTest, RefusalIsUnavailableWithAHint) {
  EXPECT_TRUE(ConnackStatus(0).ok());
  absl::Status s = ConnackStatus(0x86);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("username and password"));
}

TEST(MosquittoStatusTest, MapsWhatTheCallerDoesNext) {
  EXPECT_EQ(MosquittoStatus(MOSQ_ERR_CONN_LOST, "x").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(MosquittoStatus(MOSQ_ERR_TLS, "x").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(MosquittoStatus(MOSQ_ERR_PAYLOAD_SIZE, "x").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(MosquittoStatus(MOSQ_ERR_ERRNO, "ctx", ECONNREFUSED).message(),
              HasSubstr("refused"));
}

}  // namespace
}  // namespace outbox
