// Copyright (c) edge-outbox authors.
//
// The store clock (lib/store_clock.h): what deletions by age are measured
// on. It ignores the wall clock's jumps, counts only time the store is open,
// and goes on after a reopen from the last write, never below it.

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using testing::MakeEvent;

constexpr absl::Duration kForty = absl::Hours(24 * 40);

class StoreClockTest : public testing::StoreTest {};

TEST_F(StoreClockTest, IgnoresTheWallClockAndGoesOnFromTheLastWrite) {
  const absl::Time start = store_->StoreClockNow();
  clock_.Set(clock_.Now() + kForty);
  EXPECT_EQ(store_->StoreClockNow(), start);
  clock_.Advance(absl::Hours(1));
  EXPECT_EQ(store_->StoreClockNow(), start + absl::Hours(1));
  CommitEvent(MakeEvent("sale"));  // persists it
  clock_.Advance(absl::Hours(5));
  Reopen();  // Close persists it too
  EXPECT_EQ(store_->StoreClockNow(), start + absl::Hours(6));
  clock_.Set(clock_.Now() - absl::Hours(24 * 365 * 6));
  EXPECT_EQ(store_->StoreClockNow(), start + absl::Hours(6));
  // Time the store is closed does not count.
  ASSERT_OUTBOX_OK(store_->Close());
  store_.reset();
  clock_.Advance(absl::Hours(48));  // off for two days
  Reopen();
  EXPECT_EQ(store_->StoreClockNow(), start + absl::Hours(6));
}

TEST_F(StoreClockTest, ADeadLetterAgesOnlyOnTheStoreClock) {
  CommitEvent(MakeEvent("sale"));
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(OnlyDue(), "rejected"));
  clock_.Set(clock_.Now() + kForty);
  clock_.Advance(absl::Minutes(5));
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_EQ((*dead)[0].dead_for, absl::Minutes(5));
  auto purged = store_->PurgeDeadLetters(absl::Hours(720));
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 0u) << "a wall clock 40 days ahead aged it";
  Reopen();  // the store clock goes on from the last write, not 40 d on
  purged = store_->PurgeDeadLetters(absl::Hours(720));
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 0u);
  clock_.Advance(absl::Hours(721));
  purged = store_->PurgeDeadLetters(absl::Hours(720));
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 1u);
}

// Dead-lettered while the wall clock was six years behind (a board without
// an RTC, before NTP): once the clock is right, its wall-clock time says
// six years old, but it keeps its whole retention.
TEST_F(StoreClockTest, ADeadLetterMadeUnderAClockSetBackKeepsItsRetention) {
  const absl::Time right = clock_.Now();
  CommitEvent(MakeEvent("sale"));
  clock_.Set(right - absl::Hours(24 * 365 * 6));
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(OnlyDue(), "rejected"));
  clock_.Set(right);
  clock_.Advance(absl::Hours(1));
  auto purged = store_->PurgeDeadLetters(absl::Hours(720));
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 0u);
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_EQ((*dead)[0].dead_for, absl::Hours(1));
}

TEST_F(StoreClockTest, APurgeRefusesANegativeAge) {
  EXPECT_STATUS_CODE(store_->PurgeDeadLetters(-absl::Seconds(1)),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(store_->PurgeFinishedWorkflows(-absl::Seconds(1)),
                     absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace outbox
