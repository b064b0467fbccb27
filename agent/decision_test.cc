// Copyright (c) edge-outbox authors.
//
// What the agent does after a delivery, without sockets: every row of the
// "What the answer does to the event" table in docs/transports.md through
// Decide().

#include "agent/decision.h"

#include <string>

#include "absl/random/mock_distributions.h"
#include "absl/random/mocking_bit_gen.h"
#include "absl/strings/str_cat.h"
#include "agent/send/http_sender.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/events.h"

namespace outbox {
namespace {

using ::testing::_;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);  // 2026-01-01

// A sale committed an hour ago, not tried yet.
PendingEvent UntriedEvent() {
  return testing::MakePendingSale(kNow - absl::Hours(1));
}

// Decide() with a generator whose uniform draws are always the top of their
// interval (or, after PinJitter(false), the bottom): the full-jitter backoff
// then waits exactly its ceiling (or nothing), so a delay reads off without
// statistics.
class DecideTest : public ::testing::Test {
 protected:
  DecideTest() { PinJitter(/*top=*/true); }

  void PinJitter(bool top) {
    ON_CALL(absl::MockUniform<int64_t>(),
            Call(absl::IntervalClosedClosed, gen_, _, _))
        .WillByDefault([top](absl::IntervalClosedClosedTag, int64_t lo,
                             int64_t hi) { return top ? hi : lo; });
  }

  Decision DecideNow(const HttpResult& result,
                     const PendingEvent& event = UntriedEvent(),
                     const RetryPolicy& policy = RetryPolicy()) {
    return Decide(SendResultFromHttp(result, kNow), event, policy, kNow, gen_);
  }

  // Absl makes the mocks of exactly this type nice.
  ::testing::NiceMock<absl::MockingBitGen> gen_;
};

HttpResult Answered(int status, std::string retry_after = "") {
  HttpResult r;
  r.http_status = status;
  r.retry_after = std::move(retry_after);
  return r;
}

// --- Decide: the outcome table --------------------------------------------

TEST_F(DecideTest, TwoHundredsAreDelivered) {
  for (int status : {200, 201, 202, 204, 299}) {
    const Decision d = DecideNow(Answered(status));
    EXPECT_EQ(d.kind, Decision::Kind::kDelivered) << status;
  }
}

TEST_F(DecideTest, RetryableStatusesAreRetriedAfterBackoff) {
  const RetryPolicy policy;
  for (int status : {408, 425, 429, 500, 502, 503, 504, 599}) {
    const Decision d = DecideNow(Answered(status), UntriedEvent(), policy);
    EXPECT_EQ(d.kind, Decision::Kind::kRetry) << status;
    EXPECT_EQ(d.http_status, status);
    EXPECT_EQ(d.error, absl::StrCat("HTTP ", status));
    EXPECT_EQ(d.next_attempt, kNow + policy.base_delay) << status;
  }
}

TEST_F(DecideTest, BackoffDoublesPerAttemptUpToMaxDelay) {
  const RetryPolicy policy;  // 1 s doubling to 10 min
  auto wait_after = [&](uint32_t earlier_attempts) {
    PendingEvent e = UntriedEvent();
    e.attempts = earlier_attempts;
    e.first_attempt = kNow - absl::Minutes(1);
    return DecideNow(Answered(503), e, policy).next_attempt - kNow;
  };
  EXPECT_EQ(wait_after(0), absl::Seconds(1));
  EXPECT_EQ(wait_after(1), absl::Seconds(2));
  EXPECT_EQ(wait_after(3), absl::Seconds(8));
  EXPECT_EQ(wait_after(9), absl::Seconds(512));
  EXPECT_EQ(wait_after(10), absl::Minutes(10));
  EXPECT_EQ(wait_after(500), absl::Minutes(10));
}

TEST_F(DecideTest, RetryAfterSecondsIsALowerBound) {
  PinJitter(/*top=*/false);  // the backoff alone waits 0
  const Decision d = DecideNow(Answered(429, "120"));
  EXPECT_EQ(d.kind, Decision::Kind::kRetry);
  EXPECT_EQ(d.next_attempt, kNow + absl::Seconds(120));
}

TEST_F(DecideTest, RetryAfterHttpDateIsHonoured) {
  PinJitter(/*top=*/false);
  const Decision d = DecideNow(Answered(503, "Thu, 01 Jan 2026 00:00:30 GMT"));
  EXPECT_EQ(d.kind, Decision::Kind::kRetry);
  EXPECT_EQ(d.next_attempt, kNow + absl::Seconds(30));
}

TEST_F(DecideTest, RetryAfterIsCappedAtMaxRetryAfter) {
  PinJitter(/*top=*/false);
  const Decision d = DecideNow(Answered(429, "86400"));
  EXPECT_EQ(d.next_attempt, kNow + absl::Hours(1));
}

TEST_F(DecideTest, ConnectionFailedAfterTheRequestLeftIsARetriedAttempt) {
  HttpResult r;
  r.transport = absl::UnavailableError("connection reset after sending");
  r.offline = false;
  const Decision d = DecideNow(r);
  EXPECT_EQ(d.kind, Decision::Kind::kRetry);
  EXPECT_EQ(d.http_status, 0);
  EXPECT_THAT(d.error, HasSubstr("connection reset"));
  EXPECT_EQ(d.next_attempt, kNow + absl::Seconds(1));
}

TEST_F(DecideTest, GonePausesTheDestination) {
  const Decision d = DecideNow(Answered(410));
  EXPECT_EQ(d.kind, Decision::Kind::kPauseDestination);
  EXPECT_EQ(d.http_status, 410);
  EXPECT_THAT(d.error, HasSubstr("HTTP 410"));
}

TEST_F(DecideTest, OtherClientErrorsAndRedirectsAreDeadLetteredAtOnce) {
  for (int status : {400, 404, 409, 413, 422, 301, 302, 307, 308}) {
    const Decision d = DecideNow(Answered(status));
    EXPECT_EQ(d.kind, Decision::Kind::kDeadLetter) << status;
    EXPECT_EQ(d.http_status, status);
    EXPECT_THAT(d.error, HasSubstr(absl::StrCat("HTTP ", status)));
  }
}

TEST_F(DecideTest, RefusalsOfTheDeviceHoldAndAreNotAttempts) {
  PendingEvent e = UntriedEvent();
  e.attempts = RetryPolicy().max_attempts - 1;  // one more would give up
  e.retry_age = absl::Hours(1);
  for (int status : {401, 403}) {
    const Decision d = DecideNow(Answered(status), e);
    EXPECT_EQ(d.kind, Decision::Kind::kHoldDestination) << status;
    EXPECT_EQ(d.retry_age, e.retry_age) << status;  // not aged either
    EXPECT_THAT(d.error, HasSubstr(absl::StrCat("HTTP ", status)));
    EXPECT_THAT(d.error, HasSubstr("not the event"));
  }
}

TEST_F(DecideTest, TheDestinationsAnswersDecide) {
  RetryPolicy policy;
  policy.answers[401] = DeliveryOutcome::kDeadLetter;
  policy.answers[404] = DeliveryOutcome::kHoldDestination;
  policy.answers[409] = DeliveryOutcome::kRetry;
  EXPECT_EQ(DecideNow(Answered(401), UntriedEvent(), policy).kind,
            Decision::Kind::kDeadLetter);
  EXPECT_EQ(DecideNow(Answered(404), UntriedEvent(), policy).kind,
            Decision::Kind::kHoldDestination);
  const Decision retry =
      DecideNow(Answered(409, /*retry_after=*/"7"), UntriedEvent(), policy);
  EXPECT_EQ(retry.kind, Decision::Kind::kRetry);
  EXPECT_GE(retry.next_attempt, kNow + absl::Seconds(7));  // honoured
  EXPECT_EQ(DecideNow(Answered(403), UntriedEvent(), policy).kind,
            Decision::Kind::kHoldDestination);  // not listed: the table
}

// MQTT: the destination's answers name PUBACK reason codes; a code they
// do not name keeps the built-in meaning the sender gave it.
TEST_F(DecideTest, TheDestinationsAnswersDecideAPuback) {
  RetryPolicy policy;
  policy.answers[0x97] = DeliveryOutcome::kHoldDestination;  // quota
  policy.answers[0x87] = DeliveryOutcome::kDeadLetter;
  auto puback = [](int code, DeliveryOutcome table) {
    SendResult r;
    r.reason_code = code;
    r.outcome = table;
    r.answer = "PUBACK";
    return r;
  };
  auto decide = [&](const SendResult& r) {
    return Decide(r, UntriedEvent(), policy, kNow, gen_).kind;
  };
  EXPECT_EQ(decide(puback(0x97, DeliveryOutcome::kRetry)),
            Decision::Kind::kHoldDestination);
  EXPECT_EQ(decide(puback(0x87, DeliveryOutcome::kHoldDestination)),
            Decision::Kind::kDeadLetter);
  EXPECT_EQ(decide(puback(0x90, DeliveryOutcome::kDeadLetter)),
            Decision::Kind::kDeadLetter);  // not listed: the table
  EXPECT_EQ(decide(puback(0x80, DeliveryOutcome::kRetry)),
            Decision::Kind::kRetry);
  policy.answers[0x10] = DeliveryOutcome::kDeadLetter;  // config refuses it
  EXPECT_EQ(decide(puback(0x10, DeliveryOutcome::kDelivered)),
            Decision::Kind::kDelivered);  // a success code always delivers
}

// 0x80 ("Unspecified error") is the lowest refusing reason code: an entry
// for it is the destination's meaning, like one for any refusal above it.
TEST_F(DecideTest, AnAnswersEntryForPuback0x80IsHonoured) {
  RetryPolicy policy;
  policy.answers[0x80] = DeliveryOutcome::kHoldDestination;
  SendResult r;
  r.reason_code = 0x80;
  r.outcome = DeliveryOutcome::kRetry;  // the built-in table's
  r.answer = "PUBACK 0x80";
  EXPECT_EQ(Decide(r, UntriedEvent(), policy, kNow, gen_).kind,
            Decision::Kind::kHoldDestination);
}

TEST_F(DecideTest, NeverReachedTheReceiverIsNotAnAttempt) {
  HttpResult r;
  r.transport = absl::UnavailableError("could not connect: refused");
  r.offline = true;
  const Decision d = DecideNow(r);
  EXPECT_EQ(d.kind, Decision::Kind::kOffline);
  EXPECT_THAT(d.error, HasSubstr("refused"));
}

// The handshake is where the peer is checked, and curl writes no request
// byte before it completes: a peer that fails verification got nothing.
TEST_F(DecideTest, TlsVerificationFailureIsNotAnAttempt) {
  PendingEvent e = UntriedEvent();
  e.attempts = RetryPolicy().max_attempts - 1;  // one more would give up
  HttpResult r;
  r.transport = absl::FailedPreconditionError(
      "POST https://h/: SSL peer certificate was not OK; set "
      "TlsOptions::ca_file");
  r.offline = false;
  const Decision d = DecideNow(r, e);
  EXPECT_EQ(d.kind, Decision::Kind::kOffline);
  EXPECT_THAT(d.error, HasSubstr("TLS"));
  EXPECT_THAT(d.error, HasSubstr("ca_file"));
}

TEST_F(DecideTest, MaxAttemptsReachedIsDeadLettered) {
  RetryPolicy policy;
  policy.max_attempts = 5;
  PendingEvent e = UntriedEvent();
  e.first_attempt = kNow - absl::Minutes(1);
  e.attempts = 3;  // this is the 4th: retried
  EXPECT_EQ(DecideNow(Answered(503), e, policy).kind, Decision::Kind::kRetry);
  e.attempts = 4;  // this is the 5th: the last
  const Decision d = DecideNow(Answered(503), e, policy);
  EXPECT_EQ(d.kind, Decision::Kind::kDeadLetter);
  EXPECT_EQ(d.http_status, 503);
  EXPECT_THAT(d.error, HasSubstr("gave up after 5 attempts"));
  EXPECT_THAT(d.error, HasSubstr("HTTP 503"));
}

TEST_F(DecideTest, MaxAgeReachedIsDeadLettered) {
  const RetryPolicy policy;  // 72 h
  PendingEvent e = UntriedEvent();
  e.attempts = 10;
  e.first_attempt = kNow - absl::Hours(80);
  e.last_attempt = kNow - absl::Seconds(1);
  e.retry_age = policy.max_age - absl::Seconds(2);
  const Decision retry = DecideNow(Answered(500), e, policy);
  EXPECT_EQ(retry.kind, Decision::Kind::kRetry);
  EXPECT_EQ(retry.retry_age, policy.max_age - absl::Seconds(1));
  e.retry_age = policy.max_age - absl::Seconds(1);
  const Decision d = DecideNow(Answered(500), e, policy);
  EXPECT_EQ(d.kind, Decision::Kind::kDeadLetter);
  EXPECT_THAT(d.error,
              HasSubstr("gave up after 11 attempts, retrying for 72h"));
}

TEST_F(DecideTest, ClockSetForwardSixYearsDoesNotDeadLetter) {
  // Attempts made while the board's clock said 2020; NTP then set it to now.
  PendingEvent e = UntriedEvent();
  e.attempts = 10;
  e.first_attempt = kNow - absl::Hours(24 * 365 * 6);
  e.last_attempt = e.first_attempt + absl::Minutes(30);
  e.retry_age = absl::Minutes(30);
  const Decision d = DecideNow(Answered(500), e, RetryPolicy());
  EXPECT_EQ(d.kind, Decision::Kind::kRetry);
  EXPECT_EQ(d.retry_age,
            absl::Minutes(30) + absl::Hours(1));  // one gap, capped
}

TEST_F(DecideTest, OlderEntryWithoutLastAttemptCountsFromItsFirst) {
  PendingEvent e = UntriedEvent();
  e.attempts = 3;
  e.first_attempt = kNow - absl::Seconds(40);
  const Decision d = DecideNow(Answered(500), e, RetryPolicy());
  EXPECT_EQ(d.retry_age, absl::Seconds(40));
}

}  // namespace
}  // namespace outbox
