// Copyright (c) edge-outbox authors.

#include "agent/dead_letter_fuse.h"

#include "gtest/gtest.h"

namespace outbox {
namespace {

using Verdict = DeadLetterFuse::Verdict;

TEST(DeadLetterFuseTest, TheLimitthDeadLetterWithOneAnswerTripsIt) {
  DeadLetterFuse fuse;
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(fuse.OnDeadLetters("sink", "HTTP 400", 1, 10),
              Verdict::kDeadLetter);
  }
  EXPECT_FALSE(fuse.tripped("sink"));
  EXPECT_EQ(fuse.OnDeadLetters("sink", "HTTP 400", 1, 10),
            Verdict::kDeadLetterTrips);
  EXPECT_TRUE(fuse.tripped("sink"));
  // Tripped: whatever dead-lettering answer comes is held.
  EXPECT_EQ(fuse.OnDeadLetters("sink", "HTTP 400", 1, 10), Verdict::kHold);
  EXPECT_EQ(fuse.OnDeadLetters("sink", "HTTP 422", 1, 10), Verdict::kHold);
  EXPECT_FALSE(fuse.tripped("other"));
}

TEST(DeadLetterFuseTest, ADeliveryEndsTheRunAndResetsIt) {
  DeadLetterFuse fuse;
  for (int i = 0; i < 9; ++i) fuse.OnDeadLetters("sink", "HTTP 400", 1, 10);
  EXPECT_FALSE(fuse.OnDelivered("sink"));  // a 2xx: not tripped yet
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(fuse.OnDeadLetters("sink", "HTTP 400", 1, 10),
              Verdict::kDeadLetter);
  }
  // A different dead-lettering answer starts a run of its own.
  EXPECT_EQ(fuse.OnDeadLetters("sink", "HTTP 422", 1, 10),
            Verdict::kDeadLetter);
  for (int i = 0; i < 9; ++i) fuse.OnDeadLetters("sink", "HTTP 400", 1, 10);
  EXPECT_EQ(fuse.OnDeadLetters("sink", "HTTP 400", 1, 10),
            Verdict::kDeadLetterTrips);
  EXPECT_TRUE(fuse.OnDelivered("sink"));  // the receiver accepts again
  EXPECT_FALSE(fuse.tripped("sink"));
  EXPECT_EQ(fuse.OnDeadLetters("sink", "HTTP 400", 1, 10),
            Verdict::kDeadLetter);
}

TEST(DeadLetterFuseTest, ABatchThatWouldPassTheLimitIsHeldWhole) {
  DeadLetterFuse fuse;
  EXPECT_EQ(fuse.OnDeadLetters("sink", "HTTP 400", 8, 10),
            Verdict::kDeadLetter);
  EXPECT_EQ(fuse.OnDeadLetters("sink", "HTTP 400", 5, 10), Verdict::kHold);
  EXPECT_TRUE(fuse.tripped("sink"));
  DeadLetterFuse exact;
  EXPECT_EQ(exact.OnDeadLetters("sink", "HTTP 400", 10, 10),
            Verdict::kDeadLetterTrips);
}

TEST(DeadLetterFuseTest, ZeroIsNoFuse) {
  DeadLetterFuse fuse;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(fuse.OnDeadLetters("sink", "HTTP 400", 1, 0),
              Verdict::kDeadLetter);
  }
  EXPECT_FALSE(fuse.tripped("sink"));
}

}  // namespace
}  // namespace outbox
