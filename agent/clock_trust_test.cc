// Copyright (c) edge-outbox authors.

#include "agent/clock_trust.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

const absl::Time kMark = absl::FromUnixSeconds(1767225600);  // 2026-01-01

TEST(ClockTrustTest, AClockAtOrNearTheMarkIsTrusted) {
  ClockTrust trust(absl::Minutes(5), false);
  EXPECT_FALSE(trust.Update(kMark, kMark, std::nullopt));
  EXPECT_FALSE(trust.Update(kMark - absl::Minutes(5), kMark, std::nullopt));
  EXPECT_FALSE(trust.Update(kMark + absl::Hours(24 * 400), kMark, false));
  EXPECT_TRUE(trust.trusted());
}

TEST(ClockTrustTest, AClockBehindTheMarkByMoreThanTheToleranceIsNot) {
  ClockTrust trust(absl::Minutes(5), false);
  const absl::Time stale = absl::FromUnixSeconds(1577836800);  // 2020-01-01
  EXPECT_TRUE(trust.Update(stale, kMark, std::nullopt));
  EXPECT_FALSE(trust.trusted());
  EXPECT_THAT(trust.why(), HasSubstr("2020-01-01T00:00:00Z"));
  EXPECT_THAT(trust.why(), HasSubstr("2026-01-01T00:00:00Z"));
  EXPECT_THAT(trust.why(), HasSubstr("clock_tolerance (5m)"));
  // Said once per spell.
  EXPECT_FALSE(trust.Update(stale + absl::Seconds(1), kMark, std::nullopt));
  // Just past the tolerance is still wrong; within it is right again.
  EXPECT_FALSE(trust.Update(kMark - absl::Minutes(5) - absl::Seconds(1), kMark,
                            std::nullopt));
  EXPECT_TRUE(trust.Update(kMark - absl::Minutes(5), kMark, std::nullopt));
  EXPECT_TRUE(trust.trusted());
  EXPECT_THAT(trust.why(), HasSubstr("trusted again"));
}

TEST(ClockTrustTest, AStoreWithoutAMarkTrustsAnyClock) {
  ClockTrust trust(absl::Minutes(5), false);
  EXPECT_FALSE(
      trust.Update(absl::UnixEpoch(), absl::InfinitePast(), std::nullopt));
  EXPECT_TRUE(trust.trusted());
}

TEST(ClockTrustTest, AZeroToleranceTurnsTheMarkCheckOff) {
  ClockTrust trust(absl::ZeroDuration(), false);
  EXPECT_FALSE(trust.Update(absl::UnixEpoch(), kMark, std::nullopt));
  EXPECT_TRUE(trust.trusted());
}

TEST(ClockTrustTest, SynchronizationCountsOnlyWhenRequired) {
  ClockTrust lax(absl::Minutes(5), false);
  EXPECT_FALSE(lax.Update(kMark, kMark, false));
  EXPECT_TRUE(lax.trusted());

  ClockTrust strict(absl::Minutes(5), true);
  EXPECT_TRUE(strict.Update(kMark, kMark, false));
  EXPECT_FALSE(strict.trusted());
  EXPECT_THAT(strict.why(), HasSubstr("not synchronized"));
  EXPECT_TRUE(strict.Update(kMark, kMark, true));
  EXPECT_TRUE(strict.trusted());
  // A clock that cannot tell counts as synchronized.
  EXPECT_FALSE(strict.Update(kMark, kMark, std::nullopt));
  EXPECT_TRUE(strict.trusted());
}

}  // namespace
}  // namespace outbox
