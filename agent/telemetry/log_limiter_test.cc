// Copyright (c) edge-outbox authors.

#include "agent/telemetry/log_limiter.h"

#include "gtest/gtest.h"

namespace outbox {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);

TEST(LogLimiterTest, WritesTheBurstThenHoldsTheRestOfTheWindow) {
  LogLimiter limiter(3, absl::Minutes(1));
  LogLimiter::Held held;
  int written = 0;
  for (int i = 0; i < 100; ++i) {
    written += limiter.Admit(LogEvent::kRetryScheduled, "backend",
                             kT0 + absl::Milliseconds(i), &held);
    EXPECT_EQ(held.count, 0u);
  }
  EXPECT_EQ(written, 3);
}

TEST(LogLimiterTest, ReportsWhatWasHeldWhenTheNextWindowOpens) {
  LogLimiter limiter(2, absl::Minutes(1));
  LogLimiter::Held held;
  for (int i = 0; i < 10; ++i) {
    limiter.Admit(LogEvent::kRetryScheduled, "backend", kT0 + absl::Seconds(i),
                  &held);
  }
  EXPECT_TRUE(limiter.Admit(LogEvent::kRetryScheduled, "backend",
                            kT0 + absl::Minutes(2), &held));
  EXPECT_EQ(held.count, 8u);
  EXPECT_EQ(held.destination, "backend");
  EXPECT_EQ(held.event, LogEvent::kRetryScheduled);
  EXPECT_EQ(held.over, absl::Seconds(9));
  // Reported once.
  EXPECT_TRUE(limiter.Admit(LogEvent::kRetryScheduled, "backend",
                            kT0 + absl::Minutes(2) + absl::Seconds(1), &held));
  EXPECT_EQ(held.count, 0u);
}

TEST(LogLimiterTest, KeysAreCountedApart) {
  LogLimiter limiter(1, absl::Minutes(1));
  LogLimiter::Held held;
  EXPECT_TRUE(limiter.Admit(LogEvent::kRetryScheduled, "a", kT0, &held));
  EXPECT_TRUE(limiter.Admit(LogEvent::kRetryScheduled, "b", kT0, &held));
  EXPECT_TRUE(limiter.Admit(LogEvent::kDeadLetter, "a", kT0, &held));
  EXPECT_FALSE(limiter.Admit(LogEvent::kRetryScheduled, "a", kT0, &held));
}

TEST(LogLimiterTest, TakeHeldReturnsEveryCountOnce) {
  LogLimiter limiter(1, absl::Minutes(1));
  LogLimiter::Held held;
  for (int i = 0; i < 4; ++i) {
    limiter.Admit(LogEvent::kRetryScheduled, "a", kT0, &held);
    limiter.Admit(LogEvent::kDeadLetter, "b", kT0, &held);
  }
  limiter.Admit(LogEvent::kRetryScheduled, "c", kT0, &held);  // none held
  std::vector<LogLimiter::Held> all = limiter.TakeHeld();
  ASSERT_EQ(all.size(), 2u);
  for (const LogLimiter::Held& h : all) EXPECT_EQ(h.count, 3u);
  EXPECT_TRUE(limiter.TakeHeld().empty());
}

}  // namespace
}  // namespace outbox
