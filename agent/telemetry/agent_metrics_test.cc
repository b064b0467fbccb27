// Copyright (c) edge-outbox authors.

#include "agent/telemetry/agent_metrics.h"

#include <string>

#include "agent/send/http_sender.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

using Outcome = AgentMetrics::Outcome;
using DeadReason = AgentMetrics::DeadReason;

SendResult Answered(int status) {
  HttpResult r;
  r.http_status = status;
  return SendResultFromHttp(std::move(r), absl::UnixEpoch());
}

SendResult Failed(absl::Status transport) {
  SendResult r;
  r.transport = std::move(transport);
  return r;
}

TEST(AttemptOutcomeTest, StatusesFallIntoTheirClass) {
  EXPECT_EQ(AttemptOutcome(Answered(200)), Outcome::k2xx);
  EXPECT_EQ(AttemptOutcome(Answered(204)), Outcome::k2xx);
  EXPECT_EQ(AttemptOutcome(Answered(503)), Outcome::kRetryableStatus);
  EXPECT_EQ(AttemptOutcome(Answered(429)), Outcome::kRetryableStatus);
  EXPECT_EQ(AttemptOutcome(Answered(408)), Outcome::kRetryableStatus);
  EXPECT_EQ(AttemptOutcome(Answered(400)), Outcome::k4xx);
  EXPECT_EQ(AttemptOutcome(Answered(301)), Outcome::k4xx);  // not followed
  EXPECT_EQ(AttemptOutcome(Answered(410)), Outcome::k410);
}

TEST(AttemptOutcomeTest, TransportFailuresAreTimeoutOrConnection) {
  EXPECT_EQ(AttemptOutcome(Failed(absl::DeadlineExceededError("slow"))),
            Outcome::kTimeout);
  EXPECT_EQ(AttemptOutcome(Failed(absl::UnavailableError("reset"))),
            Outcome::kConnection);
}

TEST(DeadReasonOfTest, RejectedByStatusOrGaveUpAfterRetries) {
  Settlement s;
  s.kind = Settlement::Kind::kDeadLetter;
  s.attempt.http_status = 404;
  EXPECT_EQ(DeadReasonOf(s), DeadReason::kRejected);
  s.attempt.http_status = 503;  // the last of max_attempts
  EXPECT_EQ(DeadReasonOf(s), DeadReason::kGaveUp);
  s.attempt.http_status = 0;  // the last one timed out
  EXPECT_EQ(DeadReasonOf(s), DeadReason::kGaveUp);
}

}  // namespace
}  // namespace outbox
