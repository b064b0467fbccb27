// Copyright (c) edge-outbox authors.

#include "agent/telemetry/drain_rate.h"

#include "gtest/gtest.h"

namespace outbox {
namespace {

const absl::Time kStart = absl::UnixEpoch() + absl::Hours(1);

TEST(DrainRateTest, RateIsTheLastMinutesDeliveriesOverTheirTime) {
  DrainRate rate;
  for (int s = 0; s < 120; ++s) {
    rate.OnDelivered("sink", 10, kStart + absl::Seconds(s));
  }
  // 120 s of 10/s: the window holds the last minute's 600 events.
  EXPECT_NEAR(rate.PerSecond("sink", kStart + absl::Seconds(120)), 10, 0.5);
}

TEST(DrainRateTest, FirstDeliveriesGiveARateAtOnce) {
  DrainRate rate;
  rate.OnDelivered("sink", 40, kStart);
  rate.OnDelivered("sink", 40, kStart + absl::Seconds(2));
  // Delivering for 4 s, not a minute: 80 events / 4 s.
  EXPECT_DOUBLE_EQ(rate.PerSecond("sink", kStart + absl::Seconds(4)), 20);
}

// The span is at least a second: the first deliveries after a pause are
// not spread over the few milliseconds since the first of them, which
// would show a rate, and so an ETA, a hundred times off.
TEST(DrainRateTest, ARateIsNeverTakenOverLessThanASecond) {
  DrainRate rate;
  rate.OnDelivered("sink", 10, kStart);
  EXPECT_DOUBLE_EQ(rate.PerSecond("sink", kStart + absl::Milliseconds(10)), 10);
}

TEST(DrainRateTest, DestinationsAreCountedApart) {
  DrainRate rate;
  rate.OnDelivered("a", 30, kStart);
  EXPECT_EQ(rate.PerSecond("b", kStart + absl::Seconds(1)), 0);
  EXPECT_DOUBLE_EQ(rate.PerSecond("a", kStart + absl::Seconds(1)), 30);
}

TEST(DrainRateTest, RateFallsToZeroAfterAnIdleWindow) {
  DrainRate rate;
  rate.OnDelivered("sink", 100, kStart);
  EXPECT_EQ(rate.PerSecond("sink", kStart + absl::Minutes(2)), 0);
  // Delivering again starts a new span: not spread over the idle minutes.
  rate.OnDelivered("sink", 5, kStart + absl::Minutes(3));
  EXPECT_DOUBLE_EQ(
      rate.PerSecond("sink", kStart + absl::Minutes(3) + absl::Seconds(1)), 5);
}

TEST(DrainEtaTest, PendingOverRate) {
  EXPECT_EQ(DrainEta(1000, 50), absl::Seconds(20));
  EXPECT_EQ(DrainEta(0, 0), absl::ZeroDuration());
  EXPECT_EQ(DrainEta(1, 0), absl::InfiniteDuration());
}

}  // namespace
}  // namespace outbox
