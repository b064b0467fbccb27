// Copyright (c) edge-outbox authors.
//
// Idempotent commits (seed 004): a repeated idempotency key writes nothing
// and answers with the first commit's event ids and response.

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using testing::MakeEvent;

class IdempotencyTest : public testing::StoreTest {
 protected:
  absl::StatusOr<CommitResult> CommitBooking(const std::string& key,
                                             const std::string& response,
                                             const std::string& record) {
    Txn txn;
    txn.Put("sales", "booking", record);
    txn.Emit(MakeEvent("booking.created"));
    txn.SetIdempotencyKey(key, response);
    return store_->Commit(txn);
  }
};

TEST_F(IdempotencyTest, RepeatedKeyWritesNothingAndReturnsFirstIds) {
  auto first = CommitBooking("client-req-1", "201 booking b-1", "first");
  ASSERT_OUTBOX_OK(first);
  EXPECT_FALSE(first->duplicate);
  auto second = CommitBooking("client-req-1", "ignored", "second");
  ASSERT_OUTBOX_OK(second);
  EXPECT_TRUE(second->duplicate);
  EXPECT_EQ(second->event_ids, first->event_ids);
  EXPECT_EQ(second->response, "201 booking b-1");
  EXPECT_EQ(*store_->Get("sales", "booking"), "first");
  EXPECT_EQ(store_->GetStats()->pending_events, 1u);
}

TEST_F(IdempotencyTest, RepeatedKeyIsRecognisedAcrossReopen) {
  auto first = CommitBooking("client-req-1", "resp", "first");
  ASSERT_OUTBOX_OK(first);
  Reopen();
  auto second = CommitBooking("client-req-1", "resp", "second");
  ASSERT_OUTBOX_OK(second);
  EXPECT_TRUE(second->duplicate);
  EXPECT_EQ(second->event_ids, first->event_ids);
  EXPECT_EQ(*store_->Get("sales", "booking"), "first");
  auto pending = store_->ListPending(10);
  ASSERT_OUTBOX_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].idempotency_key, "client-req-1");
}

TEST_F(IdempotencyTest, DuplicateIsRecognisedAfterEventWasDelivered) {
  auto first = CommitBooking("k", "", "first");
  ASSERT_OUTBOX_OK(first);
  ASSERT_OUTBOX_OK(store_->MarkDelivered(OnlyDue()));
  auto second = CommitBooking("k", "", "second");
  ASSERT_OUTBOX_OK(second);
  EXPECT_TRUE(second->duplicate);
  EXPECT_TRUE(DueIds().empty());
}

TEST_F(IdempotencyTest, DifferentKeysCommitSeparately) {
  ASSERT_OUTBOX_OK(CommitBooking("a", "", "x"));
  auto b = CommitBooking("b", "", "y");
  ASSERT_OUTBOX_OK(b);
  EXPECT_FALSE(b->duplicate);
  EXPECT_EQ(store_->GetStats()->pending_events, 2u);
}

TEST_F(IdempotencyTest, KeyExpiresAfterWindow) {
  options_.idempotency_window = absl::Hours(1);
  Reopen();
  auto first = CommitBooking("k", "", "first");
  ASSERT_OUTBOX_OK(first);
  clock_.Advance(absl::Hours(1));
  auto second = CommitBooking("k", "", "second");
  ASSERT_OUTBOX_OK(second);
  EXPECT_FALSE(second->duplicate);
  EXPECT_NE(second->event_ids, first->event_ids);
  EXPECT_EQ(*store_->Get("sales", "booking"), "second");
}

TEST_F(IdempotencyTest, PurgeForgetsOnlyExpiredKeys) {
  options_.idempotency_window = absl::Hours(1);
  Reopen();
  ASSERT_OUTBOX_OK(CommitBooking("old", "", "x"));
  clock_.Advance(absl::Minutes(90));
  ASSERT_OUTBOX_OK(CommitBooking("new", "", "y"));
  auto purged = store_->PurgeExpiredIdempotencyKeys();
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 1u);
  Reopen();
  auto again = CommitBooking("new", "", "z");
  ASSERT_OUTBOX_OK(again);
  EXPECT_TRUE(again->duplicate);
  auto purged_again = store_->PurgeExpiredIdempotencyKeys();
  ASSERT_OUTBOX_OK(purged_again);
  EXPECT_EQ(*purged_again, 0u);
}

TEST_F(IdempotencyTest, ReusedExpiredKeyIsNotPurgedByItsOldIndexEntry) {
  options_.idempotency_window = absl::Hours(1);
  Reopen();
  ASSERT_OUTBOX_OK(CommitBooking("k", "", "x"));
  clock_.Advance(absl::Hours(2));
  ASSERT_OUTBOX_OK(CommitBooking("k", "second answer", "y"));  // reuses "k"
  auto purged = store_->PurgeExpiredIdempotencyKeys();
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 0u);
  auto again = CommitBooking("k", "", "z");
  ASSERT_OUTBOX_OK(again);
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->response, "second answer");
}

TEST_F(IdempotencyTest, OverlongKeyIsRejected) {
  EXPECT_STATUS_CODE(CommitBooking(std::string(513, 'k'), "", "x"),
                     absl::StatusCode::kInvalidArgument);
}

// The window is measured on the store's own clock (lib/store_clock.h), never
// on the wall clock: an RTC that runs fast, an NTP glitch or a year typed
// wrong must not make a retried commit a second sale.
TEST_F(IdempotencyTest, ARetryAfterTheClockJumpsAheadIsStillADuplicate) {
  auto first = CommitBooking("k", "resp", "first");
  ASSERT_OUTBOX_OK(first);
  clock_.Set(clock_.Now() + absl::Hours(24 * 40));  // the wall clock only
  clock_.Advance(absl::Minutes(1));
  auto purged = store_->PurgeExpiredIdempotencyKeys();
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 0u);
  auto second = CommitBooking("k", "ignored", "second");
  ASSERT_OUTBOX_OK(second);
  EXPECT_TRUE(second->duplicate) << "the sale was stored twice";
  EXPECT_EQ(second->event_ids, first->event_ids);
  EXPECT_EQ(*store_->Get("sales", "booking"), "first");
  // Across a reopen too: the store's clock goes on from its last write.
  Reopen();
  auto third = CommitBooking("k", "ignored", "third");
  ASSERT_OUTBOX_OK(third);
  EXPECT_TRUE(third->duplicate);
}

// A key committed while the wall clock was years behind (a board without an
// RTC before NTP) is kept its whole window once the clock is right, not
// forgotten as years old.
TEST_F(IdempotencyTest, AKeyCommittedUnderAClockSetBackKeepsItsWindow) {
  const absl::Time right = clock_.Now();
  clock_.Set(right - absl::Hours(24 * 365 * 6));
  auto first = CommitBooking("k", "resp", "first");
  ASSERT_OUTBOX_OK(first);
  clock_.Set(right);
  clock_.Advance(absl::Minutes(1));
  auto second = CommitBooking("k", "ignored", "second");
  ASSERT_OUTBOX_OK(second);
  EXPECT_TRUE(second->duplicate) << "the sale was stored twice";
  auto purged = store_->PurgeExpiredIdempotencyKeys();
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 0u);
}

}  // namespace
}  // namespace outbox
