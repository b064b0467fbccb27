// Copyright (c) edge-outbox authors.

#include "agent/retry/retry_policy.h"

#include <climits>
#include <string>

#include "absl/random/mock_distributions.h"
#include "absl/random/mocking_bit_gen.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using ::testing::_;
using ::testing::Return;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);  // 2026-01-01

TEST(RetryPolicyTest, DefaultsAreValid) {
  EXPECT_OUTBOX_OK(ValidateRetryPolicy(RetryPolicy()));
}

TEST(RetryPolicyTest, ValidateNamesTheBadField) {
  RetryPolicy p;
  p.base_delay = absl::ZeroDuration();
  EXPECT_STATUS_CODE(ValidateRetryPolicy(p),
                     absl::StatusCode::kInvalidArgument);
  p = RetryPolicy();
  p.max_delay = absl::Milliseconds(10);
  EXPECT_STATUS_CODE(ValidateRetryPolicy(p),
                     absl::StatusCode::kInvalidArgument);
  p = RetryPolicy();
  p.max_attempts = 0;
  absl::Status s = ValidateRetryPolicy(p);
  EXPECT_STATUS_CODE(s, absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("max_attempts"), absl::string_view::npos);
}

// The mean of the default schedule, from the ceilings (mean = ceiling / 2),
// is what the max_attempts comment promises: longer than max_age, so age is
// the limit that normally ends a retry sequence.
TEST(RetryPolicyTest, DefaultAttemptLimitOutlastsMaxAgeOnAverage) {
  const RetryPolicy p;
  ::testing::NiceMock<absl::MockingBitGen> gen;
  // Ask the mock for the top of each interval to read off the ceiling.
  ON_CALL(absl::MockUniform<int64_t>(),
          Call(absl::IntervalClosedClosed, gen, _, _))
      .WillByDefault([](absl::IntervalClosedClosedTag, int64_t, int64_t hi) {
        return hi;
      });
  absl::Duration mean_total;
  for (int retry = 0; retry < p.max_attempts - 1; ++retry) {
    mean_total += BackoffDelay(p, retry, gen) / 2;
  }
  EXPECT_GT(mean_total, p.max_age);
  EXPECT_LT(mean_total, absl::Hours(90));
}

TEST(BackoffDelayTest, CeilingDoublesThenCaps) {
  RetryPolicy p;
  p.base_delay = absl::Seconds(1);
  p.max_delay = absl::Seconds(10);
  ::testing::NiceMock<absl::MockingBitGen> gen;
  ON_CALL(absl::MockUniform<int64_t>(),
          Call(absl::IntervalClosedClosed, gen, _, _))
      .WillByDefault([](absl::IntervalClosedClosedTag, int64_t lo, int64_t hi) {
        EXPECT_EQ(lo, 0);
        return hi;
      });
  EXPECT_EQ(BackoffDelay(p, 0, gen), absl::Seconds(1));
  EXPECT_EQ(BackoffDelay(p, 1, gen), absl::Seconds(2));
  EXPECT_EQ(BackoffDelay(p, 3, gen), absl::Seconds(8));
  EXPECT_EQ(BackoffDelay(p, 4, gen), absl::Seconds(10));
  EXPECT_EQ(BackoffDelay(p, INT_MAX, gen), absl::Seconds(10));
  EXPECT_EQ(BackoffDelay(p, -5, gen), absl::Seconds(1));
}

TEST(BackoffDelayTest, FullJitterCanReturnZero) {
  ::testing::NiceMock<absl::MockingBitGen> gen;
  EXPECT_CALL(absl::MockUniform<int64_t>(),
              Call(absl::IntervalClosedClosed, gen, 0, _))
      .WillOnce(Return(0));
  EXPECT_EQ(BackoffDelay(RetryPolicy(), 7, gen), absl::ZeroDuration());
}

TEST(BackoffDelayTest, RealRandomStaysWithinCeiling) {
  absl::BitGen gen(std::seed_seq{42});
  const RetryPolicy p;
  for (int retry = 0; retry < 40; ++retry) {
    for (int i = 0; i < 50; ++i) {
      const absl::Duration d = BackoffDelay(p, retry, gen);
      ASSERT_GE(d, absl::ZeroDuration());
      ASSERT_LE(d, std::min(p.max_delay, p.base_delay * (int64_t{1} << std::min(
                                                             retry, 30))));
    }
  }
}

TEST(BackoffDelayTest, OddPoliciesNeverCrashOrGoNegative) {
  absl::BitGen gen(std::seed_seq{7});
  const absl::Duration odd[] = {
      absl::ZeroDuration(),     -absl::Seconds(1),         absl::Nanoseconds(1),
      absl::InfiniteDuration(), -absl::InfiniteDuration(), absl::Hours(1e6)};
  for (absl::Duration base : odd) {
    for (absl::Duration cap : odd) {
      for (int retry : {INT_MIN, -1, 0, 1, 62, 63, 64, 1000, INT_MAX}) {
        RetryPolicy p;
        p.base_delay = base;
        p.max_delay = cap;
        const absl::Duration d = BackoffDelay(p, retry, gen);
        ASSERT_GE(d, absl::ZeroDuration());
        ASSERT_LE(d, std::max(cap, absl::ZeroDuration()));
      }
    }
  }
}

TEST(RetryDelayTest, RetryAfterIsAFloorNotAReplacement) {
  ::testing::NiceMock<absl::MockingBitGen> gen;
  ON_CALL(absl::MockUniform<int64_t>(),
          Call(absl::IntervalClosedClosed, gen, _, _))
      .WillByDefault(Return(absl::ToInt64Nanoseconds(absl::Seconds(3))));
  const RetryPolicy p;
  EXPECT_EQ(RetryDelay(p, 5, std::nullopt, gen), absl::Seconds(3));
  EXPECT_EQ(RetryDelay(p, 5, absl::Seconds(120), gen), absl::Seconds(120));
  EXPECT_EQ(RetryDelay(p, 5, absl::ZeroDuration(), gen), absl::Seconds(3));
  EXPECT_EQ(RetryDelay(p, 5, -absl::Seconds(9), gen), absl::Seconds(3));
}

TEST(RetryDelayTest, RetryAfterIsCappedByPolicy) {
  ::testing::NiceMock<absl::MockingBitGen> gen;
  ON_CALL(absl::MockUniform<int64_t>(),
          Call(absl::IntervalClosedClosed, gen, _, _))
      .WillByDefault(Return(0));
  RetryPolicy p;
  p.max_retry_after = absl::Minutes(30);
  EXPECT_EQ(RetryDelay(p, 0, absl::Hours(48), gen), absl::Minutes(30));
  EXPECT_EQ(RetryDelay(p, 0, absl::InfiniteDuration(), gen), absl::Minutes(30));
}

TEST(ParseRetryAfterTest, DeltaSeconds) {
  absl::StatusOr<absl::Duration> d = ParseRetryAfter("120", kNow);
  ASSERT_OUTBOX_OK(d);
  EXPECT_EQ(*d, absl::Seconds(120));
  d = ParseRetryAfter(" \t0 ", kNow);
  ASSERT_OUTBOX_OK(d);
  EXPECT_EQ(*d, absl::ZeroDuration());
}

TEST(ParseRetryAfterTest, HugeDeltaSecondsSaturateAt2Pow31) {
  for (const char* text :
       {"99999999999999999999999999", "2147483649", "9223372036854775807"}) {
    absl::StatusOr<absl::Duration> d = ParseRetryAfter(text, kNow);
    ASSERT_OUTBOX_OK(d);
    EXPECT_EQ(*d, absl::Seconds(int64_t{1} << 31)) << text;
  }
}

TEST(ParseRetryAfterTest, AllThreeHttpDateFormats) {
  const absl::Time now = absl::FromUnixSeconds(784111777) - absl::Seconds(90);
  for (const char* text :
       {"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994"}) {
    absl::StatusOr<absl::Duration> d = ParseRetryAfter(text, now);
    ASSERT_OUTBOX_OK(d);
    EXPECT_EQ(*d, absl::Seconds(90)) << text;
  }
}

TEST(ParseRetryAfterTest, DateInThePastIsZero) {
  absl::StatusOr<absl::Duration> d =
      ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", kNow);
  ASSERT_OUTBOX_OK(d);
  EXPECT_EQ(*d, absl::ZeroDuration());
}

TEST(ParseRetryAfterTest, GarbageIsInvalidArgument) {
  for (const char* text : {"", "   ", "-1", "+5", "1.5", "12s", "0x10", "soon",
                           "120 120", "\x80\xff"}) {
    EXPECT_STATUS_CODE(ParseRetryAfter(text, kNow),
                       absl::StatusCode::kInvalidArgument)
        << '"' << text << '"';
  }
}

TEST(ParseRetryAfterTest, RandomBytesNeverCrash) {
  absl::BitGen gen(std::seed_seq{99});
  for (int i = 0; i < 20000; ++i) {
    std::string text(absl::Uniform<size_t>(gen, 0, 40), '\0');
    for (char& c : text) {
      // Mostly digits and date characters, so some inputs parse.
      c = absl::Bernoulli(gen, 0.7)
              ? "0123456789 ,:-GMTSunNov"[absl::Uniform(gen, 0, 23)]
              : static_cast<char>(absl::Uniform(gen, 0, 256));
    }
    absl::StatusOr<absl::Duration> d = ParseRetryAfter(text, kNow);
    if (d.ok()) {
      ASSERT_GE(*d, absl::ZeroDuration());
    } else {
      ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

TEST(ClassifyTest, SuccessIsDelivered) {
  for (int s : {200, 201, 202, 204, 299}) {
    EXPECT_EQ(Classify(s), DeliveryOutcome::kDelivered) << s;
  }
}

TEST(ClassifyTest, TransientFailuresRetry) {
  for (int s : {408, 425, 429, 500, 502, 503, 504, 599}) {
    EXPECT_EQ(Classify(s), DeliveryOutcome::kRetry) << s;
  }
}

TEST(ClassifyTest, GonePausesDestination) {
  EXPECT_EQ(Classify(410), DeliveryOutcome::kPauseDestination);
}

TEST(ClassifyTest, RedirectsAndOtherClientErrorsDeadLetter) {
  for (int s : {300, 301, 302, 304, 307, 308, 399, 400, 402, 404, 405, 409, 411,
                413, 415, 422, 426, 451, 499}) {
    EXPECT_EQ(Classify(s), DeliveryOutcome::kDeadLetter) << s;
  }
}

// A wrong secret, a stale signature timestamp, a revoked token: true of
// every event alike, so no verdict on any one of them.
TEST(ClassifyTest, UnauthorizedAndForbiddenHoldTheDestination) {
  EXPECT_EQ(Classify(401), DeliveryOutcome::kHoldDestination);
  EXPECT_EQ(Classify(403), DeliveryOutcome::kHoldDestination);
}

TEST(ClassifyTest, ADestinationsAnswersOverrideTheTable) {
  RetryPolicy policy;
  policy.answers[404] = DeliveryOutcome::kHoldDestination;
  policy.answers[403] = DeliveryOutcome::kDeadLetter;
  EXPECT_EQ(ClassifyFor(404, policy), DeliveryOutcome::kHoldDestination);
  EXPECT_EQ(ClassifyFor(403, policy), DeliveryOutcome::kDeadLetter);
  EXPECT_EQ(ClassifyFor(401, policy), DeliveryOutcome::kHoldDestination);
  EXPECT_EQ(ClassifyFor(422, policy), DeliveryOutcome::kDeadLetter);
  EXPECT_EQ(ClassifyFor(503, policy), DeliveryOutcome::kRetry);
}

TEST(ClassifyTest, AnswerMeaningsParse) {
  EXPECT_EQ(*ParseAnswerOutcome("retry"), DeliveryOutcome::kRetry);
  EXPECT_EQ(*ParseAnswerOutcome("dead_letter"), DeliveryOutcome::kDeadLetter);
  EXPECT_EQ(*ParseAnswerOutcome("hold"), DeliveryOutcome::kHoldDestination);
  EXPECT_EQ(*ParseAnswerOutcome("pause"), DeliveryOutcome::kPauseDestination);
  for (const char* bad : {"", "delivered", "Hold", "dead-letter"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseAnswerOutcome(bad).status()))
        << bad;
  }
}

TEST(ClassifyTest, NonsenseStatusesRetry) {
  for (int s : {INT_MIN, -1, 0, 1, 99, 100, 101, 199, 600, 999, INT_MAX}) {
    EXPECT_EQ(Classify(s), DeliveryOutcome::kRetry) << s;
  }
}

TEST(ClassifyTest, EveryOutcomeHasAName) {
  EXPECT_EQ(DeliveryOutcomeName(Classify(200)), "delivered");
  EXPECT_EQ(DeliveryOutcomeName(Classify(503)), "retry");
  EXPECT_EQ(DeliveryOutcomeName(Classify(410)), "pause_destination");
  EXPECT_EQ(DeliveryOutcomeName(Classify(404)), "dead_letter");
  EXPECT_EQ(DeliveryOutcomeName(Classify(401)), "hold_destination");
}

TEST(GiveUpTest, StopsAtMaxAttempts) {
  RetryPolicy p;
  p.max_attempts = 3;
  EXPECT_FALSE(GiveUp(2, absl::ZeroDuration(), p));
  EXPECT_TRUE(GiveUp(3, absl::ZeroDuration(), p));
  EXPECT_TRUE(GiveUp(INT_MAX, absl::ZeroDuration(), p));
}

TEST(GiveUpTest, StopsAtMaxAge) {
  RetryPolicy p;
  p.max_age = absl::Hours(72);
  EXPECT_FALSE(GiveUp(1, absl::Hours(72) - absl::Seconds(1), p));
  EXPECT_TRUE(GiveUp(1, absl::Hours(72), p));
}

TEST(NextRetryAgeTest, FirstAttemptAddsNothing) {
  EXPECT_EQ(NextRetryAge(absl::ZeroDuration(), absl::InfinitePast(), kNow,
                         RetryPolicy()),
            absl::ZeroDuration());
}

TEST(NextRetryAgeTest, AddsTheGapSinceThePreviousAttempt) {
  EXPECT_EQ(NextRetryAge(absl::Minutes(5), kNow - absl::Seconds(30), kNow,
                         RetryPolicy()),
            absl::Minutes(5) + absl::Seconds(30));
}

TEST(NextRetryAgeTest, ClockSetForwardAddsAtMostTheLongestWait) {
  RetryPolicy p;  // max_delay 10 min, max_retry_after 1 h
  EXPECT_EQ(
      NextRetryAge(absl::Minutes(5), kNow - absl::Hours(24 * 365 * 6), kNow, p),
      absl::Minutes(5) + absl::Hours(1));
}

TEST(NextRetryAgeTest, ClockSetBackAddsNothing) {
  EXPECT_EQ(NextRetryAge(absl::Minutes(5), kNow + absl::Hours(24 * 365 * 6),
                         kNow, RetryPolicy()),
            absl::Minutes(5));
}

TEST(NextRetryAgeTest, ExtremeInputsNeverCrash) {
  const absl::Time times[] = {absl::InfinitePast(), absl::InfiniteFuture(),
                              absl::UnixEpoch(), kNow};
  for (absl::Time previous : times) {
    for (absl::Time now : times) {
      const absl::Duration age =
          NextRetryAge(absl::ZeroDuration(), previous, now, RetryPolicy());
      EXPECT_GE(age, absl::ZeroDuration());
      EXPECT_LE(age, absl::Hours(1));
    }
  }
}

}  // namespace
}  // namespace outbox
