// Copyright (c) edge-outbox authors.
//
// Store::WallClockMark: the newest wall-clock time of any write, durable
// with each write, never lowered by a clock set back, and lowered to the
// clock's time only by ResetWallClockMark.

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using testing::MakeEvent;

constexpr absl::Duration kSixYears = absl::Hours(6 * 365 * 24);

class ClockMarkTest : public testing::StoreTest {};

TEST_F(ClockMarkTest, ACommitSetsTheMarkToItsTime) {
  clock_.Advance(absl::Minutes(3));
  CommitEvent(MakeEvent("sale"));
  EXPECT_EQ(store_->WallClockMark(), clock_.Now());
}

TEST_F(ClockMarkTest, CommitsAndSettlementsRaiseTheMarkDurably) {
  CommitEvent(MakeEvent("sale"));
  clock_.Advance(absl::Minutes(10));
  ASSERT_OUTBOX_OK(store_->MarkDelivered(OnlyDue()));
  const absl::Time settled = clock_.Now();
  EXPECT_EQ(store_->WallClockMark(), settled);
  Reopen();
  EXPECT_EQ(store_->WallClockMark(), settled);
}

TEST_F(ClockMarkTest, AClockSetBackLeavesTheMarkWhereItWas) {
  CommitEvent(MakeEvent("sale"));
  const absl::Time right = clock_.Now();
  clock_.Set(right - kSixYears);  // a board that booted with a stale time
  CommitEvent(MakeEvent("sale"));
  ASSERT_OUTBOX_OK(store_->Sync());
  EXPECT_EQ(store_->WallClockMark(), right);
  Reopen();
  EXPECT_EQ(store_->WallClockMark(), right);
  // The events committed under the stale clock are kept as usual.
  EXPECT_EQ(DueIds().size(), 2u);
}

TEST_F(ClockMarkTest, ResetLowersTheMarkToTheClockAndPersistsIt) {
  clock_.Set(clock_.Now() + kSixYears);  // a clock once set into the future
  CommitEvent(MakeEvent("sale"));
  const absl::Time future = clock_.Now();
  clock_.Set(future - kSixYears);  // corrected
  ASSERT_OUTBOX_OK(store_->Sync());
  EXPECT_EQ(store_->WallClockMark(), future);
  ASSERT_OUTBOX_OK(store_->ResetWallClockMark());
  EXPECT_EQ(store_->WallClockMark(), clock_.Now());
  Reopen();
  EXPECT_EQ(store_->WallClockMark(), clock_.Now());
  EXPECT_EQ(DueIds().size(), 1u);  // nothing else changed
}

TEST_F(ClockMarkTest, AReaderSeesTheWritersMark) {
  CommitEvent(MakeEvent("sale"));
  const absl::Time mark = store_->WallClockMark();
  ASSERT_OUTBOX_OK(store_->Close());
  store_.reset();
  auto reader = Store::OpenReadOnly(options_, path());
  ASSERT_OUTBOX_OK(reader);
  EXPECT_EQ((*reader)->WallClockMark(), mark);
  EXPECT_TRUE(absl::IsFailedPrecondition((*reader)->ResetWallClockMark()));
}

}  // namespace
}  // namespace outbox
