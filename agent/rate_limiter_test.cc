// Copyright (c) edge-outbox authors.

#include "agent/rate_limiter.h"

#include "gtest/gtest.h"

namespace outbox {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);

int Starts(RateLimiter* r, absl::Time now, int64_t bytes = 0) {
  int n = 0;
  while (r->MayStart(now)) {
    r->Took(now, 1, bytes);
    ++n;
  }
  return n;
}

TEST(RateLimiterTest, ASecondsWorthGoesAtOnceThenTheRate) {
  RateLimitSettings limit;
  limit.events_per_second = 5;
  RateLimiter r(limit, kT0);
  EXPECT_EQ(Starts(&r, kT0), 5);
  EXPECT_EQ(r.NextStart(kT0),
            kT0 + absl::Milliseconds(200) + absl::Microseconds(1));
  EXPECT_EQ(Starts(&r, kT0 + absl::Milliseconds(199)), 0);
  EXPECT_EQ(Starts(&r, kT0 + absl::Milliseconds(200)), 1);
  EXPECT_EQ(Starts(&r, kT0 + absl::Seconds(2)), 5);  // never more than 1 s
}

TEST(RateLimiterTest, ABigRequestGoesThenItsDebtIsWaitedOut) {
  RateLimitSettings limit;
  limit.bytes_per_second = 1000;
  RateLimiter r(limit, kT0);
  ASSERT_TRUE(r.MayStart(kT0));
  r.Took(kT0, 1, 3000);  // three seconds' worth
  EXPECT_FALSE(r.MayStart(kT0 + absl::Seconds(1)));
  EXPECT_EQ(r.NextStart(kT0 + absl::Seconds(1)),
            kT0 + absl::Seconds(2) + absl::Microseconds(1));
  EXPECT_TRUE(r.MayStart(kT0 + absl::Seconds(2)));
}

// Each bucket holds one second's worth (docs/transports.md, "Rate limits"):
// a destination idle for a minute may then send a second's worth of bytes,
// not a minute's.
TEST(RateLimiterTest, AnIdleBytesBucketHoldsOneSecondsWorth) {
  RateLimitSettings limit;
  limit.bytes_per_second = 1000;
  RateLimiter r(limit, kT0);
  const absl::Time later = kT0 + absl::Minutes(1);
  ASSERT_TRUE(r.MayStart(later));
  r.Took(later, 1, 1001);
  EXPECT_FALSE(r.MayStart(later)) << "more than a second's worth went";
}

TEST(RateLimiterTest, ABatchTakesAllItsEvents) {
  RateLimitSettings limit;
  limit.events_per_second = 10;
  RateLimiter r(limit, kT0);
  ASSERT_TRUE(r.MayStart(kT0));
  r.Took(kT0, 50, 0);  // a batch of 50: 5 seconds of events
  EXPECT_FALSE(r.MayStart(kT0 + absl::Seconds(4)));
  EXPECT_TRUE(r.MayStart(kT0 + absl::Seconds(5) + absl::Milliseconds(100)));
}

TEST(RateLimiterTest, BelowOneEventPerSecondOneGoesEveryPeriod) {
  // 0.5/s, the proto's own example: the bucket must hold a whole event, or
  // it never fills to one and nothing is ever sent.
  RateLimitSettings limit;
  limit.events_per_second = 0.5;
  RateLimiter r(limit, kT0);
  EXPECT_EQ(Starts(&r, kT0), 1);
  EXPECT_EQ(r.NextStart(kT0), kT0 + absl::Seconds(2) + absl::Microseconds(1));
  EXPECT_EQ(Starts(&r, kT0 + absl::Milliseconds(1999)), 0);
  EXPECT_EQ(Starts(&r, kT0 + absl::Seconds(2) + absl::Microseconds(1)), 1);
  EXPECT_EQ(Starts(&r, kT0 + absl::Seconds(4) + absl::Microseconds(2)), 1);
  // Idle for a minute: still one at once, never a burst of thirty.
  EXPECT_EQ(Starts(&r, kT0 + absl::Seconds(64)), 1);
}

}  // namespace
}  // namespace outbox
