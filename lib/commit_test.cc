// Copyright (c) edge-outbox authors.
//
// Commit: a record and its events are both in the store or neither is, and
// what a commit wrote is what a reopen shows.

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "outbox/store.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

class CommitTest : public testing::StoreTest {};

TEST_F(CommitTest, RecordAndEventSurviveReopen) {
  Txn txn;
  txn.Put("sales", "sale-1", "42.00 EUR");
  const std::string id =
      txn.Emit(testing::MakeEvent("sale.created", "", R"({"sale":"sale-1"})"));
  auto result = store_->Commit(txn);
  ASSERT_OUTBOX_OK(result);
  EXPECT_FALSE(result->duplicate);
  ASSERT_EQ(result->event_ids.size(), 1u);
  EXPECT_EQ(result->event_ids[0], id);

  Reopen();
  auto record = store_->Get("sales", "sale-1");
  ASSERT_OUTBOX_OK(record);
  EXPECT_EQ(*record, "42.00 EUR");
  auto pending = store_->ListPending(10);
  ASSERT_OUTBOX_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].id, id);
  EXPECT_EQ((*pending)[0].type, "sale.created");
  EXPECT_EQ((*pending)[0].payload, R"({"sale":"sale-1"})");
  EXPECT_EQ((*pending)[0].content_type, "application/json");
  EXPECT_EQ((*pending)[0].created, clock_.Now());
  EXPECT_EQ((*pending)[0].attempts, 0u);
}

TEST_F(CommitTest, UncommittedTxnLeavesNothing) {
  {
    Txn txn;
    txn.Put("sales", "sale-1", "x");
    txn.Emit(testing::MakeEvent("sale.created"));
  }  // destroyed without Commit
  Reopen();
  EXPECT_STATUS_CODE(store_->Get("sales", "sale-1"),
                     absl::StatusCode::kNotFound);
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 0u);
}

TEST_F(CommitTest, FailingOperationAfterTheRecordLeavesNeither) {
  Txn txn;
  txn.Put("sales", "sale-1", "x");
  txn.Emit(testing::MakeEvent("sale.created"));
  txn.Put("no-such-table", "k", "v");  // fails after the record and event
  auto result = store_->Commit(txn);
  EXPECT_STATUS_CODE(result, absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("no-such-table"),
            absl::string_view::npos);

  Reopen();
  EXPECT_STATUS_CODE(store_->Get("sales", "sale-1"),
                     absl::StatusCode::kNotFound);
  auto pending = store_->ListPending(10);
  ASSERT_OUTBOX_OK(pending);
  EXPECT_TRUE(pending->empty());
}

TEST_F(CommitTest, EventWithoutTypeRejectsWholeTxn) {
  Txn txn;
  txn.Put("sales", "sale-1", "x");
  txn.Emit(testing::MakeEvent(""));
  EXPECT_STATUS_CODE(store_->Commit(txn), absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(store_->Get("sales", "sale-1"),
                     absl::StatusCode::kNotFound);
}

TEST_F(CommitTest, EmptyTxnIsInvalid) {
  Txn txn;
  EXPECT_STATUS_CODE(store_->Commit(txn), absl::StatusCode::kInvalidArgument);
}

TEST_F(CommitTest, DeleteRemovesRecordInSameBatchAsEvent) {
  Txn put;
  put.Put("sales", "sale-1", "x");
  ASSERT_OUTBOX_OK(store_->Commit(put));
  Txn del;
  del.Delete("sales", "sale-1");
  del.Emit(testing::MakeEvent("sale.voided"));
  ASSERT_OUTBOX_OK(store_->Commit(del));
  Reopen();
  EXPECT_STATUS_CODE(store_->Get("sales", "sale-1"),
                     absl::StatusCode::kNotFound);
  auto pending = store_->ListPending(10);
  ASSERT_OUTBOX_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].type, "sale.voided");
}

TEST_F(CommitTest, EventIdsAreUniqueTimeOrderedUuidV7) {
  Txn txn;
  std::string previous;
  for (int i = 0; i < 1000; ++i) {
    std::string id = txn.Emit(testing::MakeEvent("t"));
    ASSERT_EQ(id.size(), 36u) << id;
    EXPECT_EQ(id[14], '7') << "version nibble: " << id;
    EXPECT_TRUE(id[19] == '8' || id[19] == '9' || id[19] == 'a' ||
                id[19] == 'b')
        << "variant: " << id;
    EXPECT_GT(id, previous);
    previous = id;
  }
}

TEST_F(CommitTest, EventIdsSurviveReopenUnchanged) {
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    Txn txn;
    txn.Put("sales", "sale-" + std::to_string(i), "x");
    ids.push_back(txn.Emit(testing::MakeEvent("sale.created")));
    ASSERT_OUTBOX_OK(store_->Commit(txn));
  }
  Reopen();
  auto pending = store_->ListPending(100);
  ASSERT_OUTBOX_OK(pending);
  ASSERT_EQ(pending->size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ((*pending)[i].id, ids[i]);
  }
}

TEST_F(CommitTest, NonUtf8FieldsReadBackIntact) {
  // Found by the stored-entry fuzzer: proto3 `string` fields refuse to parse
  // bytes that are not UTF-8, which made such an event unreadable.
  Event e = testing::MakeEvent("caf\xe9", "till-\xff", "\x00\x01binary");
  e.content_type = "text/plain; charset=latin1\xe9";
  Txn txn;
  const std::string id = txn.Emit(e);
  txn.SetIdempotencyKey("key-\xfe");
  ASSERT_OUTBOX_OK(store_->Commit(txn));
  Reopen();
  auto due = store_->NextDue(10);
  ASSERT_OUTBOX_OK(due);
  EXPECT_TRUE(due->unreadable.empty());
  ASSERT_EQ(due->events.size(), 1u);
  EXPECT_EQ(due->events[0].id, id);
  EXPECT_EQ(due->events[0].type, e.type);
  EXPECT_EQ(due->events[0].ordering_key, e.ordering_key);
  EXPECT_EQ(due->events[0].payload, e.payload);
  EXPECT_EQ(due->events[0].content_type, e.content_type);
  EXPECT_EQ(due->events[0].idempotency_key, "key-\xfe");
}

TEST_F(CommitTest, WakeupRunsAfterCommitWithEvents) {
  int wakeups = 0;
  store_->SetWakeup([&] { ++wakeups; });
  Txn records_only;
  records_only.Put("sales", "a", "x");
  ASSERT_OUTBOX_OK(store_->Commit(records_only));
  EXPECT_EQ(wakeups, 0);
  Txn with_event;
  with_event.Emit(testing::MakeEvent("t"));
  ASSERT_OUTBOX_OK(store_->Commit(with_event));
  EXPECT_EQ(wakeups, 1);
}

TEST_F(CommitTest, ClosedStoreRefusesCalls) {
  ASSERT_OUTBOX_OK(store_->Close());
  Txn txn;
  txn.Emit(testing::MakeEvent("t"));
  EXPECT_STATUS_CODE(store_->Commit(txn),
                     absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(store_->NextDue(1), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace outbox
