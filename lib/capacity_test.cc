// Copyright (c) edge-outbox authors.
//
// Capacity limits: a commit over a limit fails with kResourceExhausted and
// writes nothing; nothing already stored is ever dropped to make room.

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using testing::MakeEvent;

class CapacityTest : public testing::StoreTest {
 protected:
  absl::StatusOr<CommitResult> CommitSale(const std::string& sale, int events,
                                          size_t payload_bytes = 10) {
    Txn txn;
    txn.Put("sales", sale, "x");
    for (int i = 0; i < events; ++i) {
      txn.Emit(MakeEvent("sale.created", "", std::string(payload_bytes, 'p')));
    }
    return store_->Commit(txn);
  }
};

TEST_F(CapacityTest, CommitOverEventLimitWritesNothing) {
  options_.max_pending_events = 3;
  Reopen();
  ASSERT_OUTBOX_OK(CommitSale("s1", 2));
  auto over = CommitSale("s2", 2);
  EXPECT_STATUS_CODE(over, absl::StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("max_pending_events"),
            absl::string_view::npos);
  Reopen();
  EXPECT_STATUS_CODE(store_->Get("sales", "s2"), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetStats()->pending_events, 2u);
  ASSERT_OUTBOX_OK(CommitSale("s3", 1));  // exactly at the limit is fine
}

TEST_F(CapacityTest, CommitOverByteLimitWritesNothing) {
  options_.max_pending_bytes = 1000;
  Reopen();
  ASSERT_OUTBOX_OK(CommitSale("s1", 1, 100));
  EXPECT_STATUS_CODE(CommitSale("s2", 1, 2000),
                     absl::StatusCode::kResourceExhausted);
  EXPECT_STATUS_CODE(store_->Get("sales", "s2"), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetStats()->pending_events, 1u);
}

TEST_F(CapacityTest, DeliveryFreesRoom) {
  options_.max_pending_events = 1;
  Reopen();
  ASSERT_OUTBOX_OK(CommitSale("s1", 1));
  EXPECT_STATUS_CODE(CommitSale("s2", 1), absl::StatusCode::kResourceExhausted);
  ASSERT_OUTBOX_OK(store_->MarkDelivered(OnlyDue()));
  ASSERT_OUTBOX_OK(CommitSale("s2", 1));
}

TEST_F(CapacityTest, RecordsWithoutEventsAreNotLimited) {
  options_.max_pending_events = 1;
  Reopen();
  ASSERT_OUTBOX_OK(CommitSale("s1", 1));
  ASSERT_OUTBOX_OK(CommitSale("s2", 0));
}

TEST_F(CapacityTest, ReplayIntoFullQueueKeepsDeadLetter) {
  options_.max_pending_events = 1;
  Reopen();
  ASSERT_OUTBOX_OK(CommitSale("s1", 1));
  PendingEvent dead = OnlyDue();
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(dead, "x"));
  ASSERT_OUTBOX_OK(CommitSale("s2", 1));
  EXPECT_STATUS_CODE(store_->Replay(dead.id),
                     absl::StatusCode::kResourceExhausted);
  EXPECT_OUTBOX_OK(store_->FindDeadLetter(dead.id));
}

}  // namespace
}  // namespace outbox
