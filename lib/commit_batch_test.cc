// Copyright (c) edge-outbox authors.
//
// BuildCommitBatch: what one commit writes, checked without a database by
// reading the built WriteBatch back.

#include "lib/commit_batch.h"

#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/codec.h"
#include "lib/keys.h"
#include "rocksdb/comparator.h"
#include "tests/testing/events.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A column family that only has a name and an id: all WriteBatch needs.
class FakeFamily : public rocksdb::ColumnFamilyHandle {
 public:
  FakeFamily(std::string name, uint32_t id) : name_(std::move(name)), id_(id) {}
  const std::string& GetName() const override { return name_; }
  uint32_t GetID() const override { return id_; }
  rocksdb::Status GetDescriptor(rocksdb::ColumnFamilyDescriptor*) override {
    return rocksdb::Status::NotSupported();
  }
  const rocksdb::Comparator* GetComparator() const override {
    return rocksdb::BytewiseComparator();
  }

 private:
  std::string name_;
  uint32_t id_;
};

// One operation of a batch: (family id, "put"/"delete", key, value).
using Op = std::tuple<uint32_t, std::string, std::string, std::string>;

class Recorder : public rocksdb::WriteBatch::Handler {
 public:
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    ops.emplace_back(cf, "put", key.ToString(), value.ToString());
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    ops.emplace_back(cf, "delete", key.ToString(), "");
    return rocksdb::Status::OK();
  }
  std::vector<Op> ops;
};

std::vector<Op> OpsOf(const rocksdb::WriteBatch& batch) {
  Recorder r;
  EXPECT_TRUE(batch.Iterate(&r).ok());
  return r.ops;
}

class CommitBatchTest : public ::testing::Test {
 protected:
  CommitContext Context() {
    CommitContext c{absl::FromUnixMillis(1'700'000'000'000),
                    before_,
                    &options_,
                    &pending_,
                    &idem_,
                    &tables_,
                    std::nullopt};
    // The store clock, behind the wall clock (a till that was off a while):
    // the window runs from it.
    c.store_clock_ms = 1'600'000'000'000;
    return c;
  }

  Options options_;
  storage::QueueState before_;
  FakeFamily pending_{"outbox.pending", 1}, idem_{"outbox.idem", 2},
      sales_{"sales", 3};
  absl::flat_hash_map<std::string, rocksdb::ColumnFamilyHandle*> tables_ = {
      {"sales", &sales_}};
};

TEST_F(CommitBatchTest, EventsTakeTheNextSeqsAndAreCounted) {
  before_.set_next_seq(7);
  before_.set_head_seq(5);
  before_.set_pending_count(2);
  before_.set_pending_bytes(100);
  Txn txn;
  const std::string a = txn.Emit(testing::MakeEvent("sale.created", "till-1"));
  const std::string b = txn.Emit(testing::MakeEvent("sale.paid"));
  auto built = BuildCommitBatch(txn, Context());
  ASSERT_OUTBOX_OK(built);

  EXPECT_THAT(built->event_ids, ElementsAre(a, b));
  ASSERT_EQ(built->events.size(), 2u);
  EXPECT_EQ(built->events[0].seq, 7u);
  EXPECT_EQ(built->events[0].ordering_key, "till-1");
  EXPECT_EQ(built->events[1].seq, 8u);
  EXPECT_EQ(built->after.next_seq(), 9u);
  EXPECT_EQ(built->after.head_seq(), 5u);  // a commit never moves the head
  EXPECT_EQ(built->after.pending_count(), 4u);
  uint64_t bytes = 0;
  for (const Op& op : OpsOf(built->batch)) {
    ASSERT_EQ(std::get<0>(op), pending_.GetID());
    bytes += std::get<3>(op).size();
  }
  EXPECT_EQ(built->after.pending_bytes(), 100 + bytes);
}

TEST_F(CommitBatchTest, EntryHoldsTheEventAndItsDueTime) {
  Txn txn;
  Event event = testing::MakeEvent("sale.created", "k", "{\"x\":1}");
  event.deliver_after = absl::FromUnixMillis(1'700'000'060'000);
  const std::string id = txn.Emit(event);
  auto built = BuildCommitBatch(txn, Context());
  ASSERT_OUTBOX_OK(built);
  const std::vector<Op> ops = OpsOf(built->batch);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(std::get<2>(ops[0]), keys::Seq(0));
  auto entry = DecodePendingEntry(0, std::get<3>(ops[0]));
  ASSERT_OUTBOX_OK(entry);
  EXPECT_EQ(entry->event_id(), id);
  EXPECT_EQ(entry->payload(), "{\"x\":1}");
  EXPECT_EQ(entry->created_unix_ms(), 1'700'000'000'000);
  EXPECT_EQ(entry->next_attempt_unix_ms(), 1'700'000'060'000);
  EXPECT_EQ(built->events[0].due_ms, 1'700'000'060'000);
}

TEST_F(CommitBatchTest, RecordsAndEventsShareTheBatch) {
  Txn txn;
  txn.Put("sales", "sale-1", "12.50");
  txn.Delete("sales", "sale-0");
  txn.Emit(testing::MakeEvent("sale.created"));
  auto built = BuildCommitBatch(txn, Context());
  ASSERT_OUTBOX_OK(built);
  const std::vector<Op> ops = OpsOf(built->batch);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0], Op(sales_.GetID(), "put", "sale-1", "12.50"));
  EXPECT_EQ(ops[1], Op(sales_.GetID(), "delete", "sale-0", ""));
  EXPECT_EQ(std::get<0>(ops[2]), pending_.GetID());
  EXPECT_EQ(built->records.Count(), 0u);
}

TEST_F(CommitBatchTest, IdempotencyKeyWritesRecordAndExpiryEntry) {
  Txn txn;
  const std::string id = txn.Emit(testing::MakeEvent("t"));
  txn.SetIdempotencyKey("till-7/1001", "answer");
  CommitContext context = Context();
  context.expired_key_committed_ms = 42;
  auto built = BuildCommitBatch(txn, context);
  ASSERT_OUTBOX_OK(built);
  std::vector<Op> idem_ops;
  for (const Op& op : OpsOf(built->batch)) {
    if (std::get<0>(op) == idem_.GetID()) idem_ops.push_back(op);
  }
  ASSERT_EQ(idem_ops.size(), 3u);
  EXPECT_EQ(idem_ops[0], Op(idem_.GetID(), "delete",
                            keys::IdempotencyExpiryKey(42, "till-7/1001"), ""));
  EXPECT_EQ(std::get<2>(idem_ops[1]),
            keys::IdempotencyRecordKey("till-7/1001"));
  storage::IdempotencyRecord record;
  ASSERT_TRUE(record.ParseFromString(std::get<3>(idem_ops[1])));
  EXPECT_THAT(record.event_ids(), ElementsAre(id));
  EXPECT_EQ(record.response(), "answer");
  EXPECT_EQ(record.committed_unix_ms(), 1'700'000'000'000);
  EXPECT_EQ(record.committed_store_clock_ms(), 1'600'000'000'000);
  // The index is keyed by the wall clock's time, as older builds read it.
  EXPECT_EQ(
      idem_ops[2],
      Op(idem_.GetID(), "put",
         keys::IdempotencyExpiryKey(1'700'000'000'000, "till-7/1001"), ""));
}

TEST_F(CommitBatchTest, UnknownTableIsInvalidArgument) {
  Txn txn;
  txn.Put("refunds", "r-1", "x");
  auto built = BuildCommitBatch(txn, Context());
  EXPECT_STATUS_CODE(built, absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(built.status().message()), HasSubstr("refunds"));
}

TEST_F(CommitBatchTest, EmptyRecordKeyIsInvalidArgument) {
  Txn txn;
  txn.Put("sales", "", "x");
  EXPECT_STATUS_CODE(BuildCommitBatch(txn, Context()),
                     absl::StatusCode::kInvalidArgument);
}

TEST_F(CommitBatchTest, CommitPastTheEventLimitIsResourceExhausted) {
  options_.max_pending_events = 3;
  before_.set_pending_count(2);
  Txn txn;
  txn.Emit(testing::MakeEvent("t"));
  ASSERT_OUTBOX_OK(BuildCommitBatch(txn, Context()));
  txn.Emit(testing::MakeEvent("t"));
  auto built = BuildCommitBatch(txn, Context());
  EXPECT_STATUS_CODE(built, absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(built.status().message()),
              HasSubstr("max_pending_events"));
}

TEST_F(CommitBatchTest, CommitPastTheByteLimitIsResourceExhausted) {
  options_.max_pending_bytes = 100;
  Txn txn;
  txn.Emit(testing::MakeEvent("t", "", std::string(200, 'x')));
  auto built = BuildCommitBatch(txn, Context());
  EXPECT_STATUS_CODE(built, absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(built.status().message()),
              HasSubstr("max_pending_bytes"));
}

TEST_F(CommitBatchTest, SplitVariantPutsRecordsApart) {
  Txn txn;
  txn.Put("sales", "sale-1", "x");
  txn.Emit(testing::MakeEvent("t"));
  CommitContext context = Context();
  context.records_apart = true;
  auto built = BuildCommitBatch(txn, context);
  ASSERT_OUTBOX_OK(built);
  EXPECT_EQ(built->records.Count(), 1u);
  EXPECT_EQ(built->batch.Count(), 1u);
}

TEST(ValidateTxnTest, RefusesEmptyTxn) {
  EXPECT_STATUS_CODE(ValidateTxn(Txn()), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateTxnTest, RefusesEventWithoutType) {
  Txn txn;
  txn.Emit(Event());
  EXPECT_STATUS_CODE(ValidateTxn(txn), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateTxnTest, RefusesOversizedIdempotencyKey) {
  Txn txn;
  txn.Emit(testing::MakeEvent("t"));
  txn.SetIdempotencyKey(std::string(513, 'k'));
  EXPECT_STATUS_CODE(ValidateTxn(txn), absl::StatusCode::kInvalidArgument);
  txn.SetIdempotencyKey(std::string(512, 'k'));
  EXPECT_OUTBOX_OK(ValidateTxn(txn));
}

}  // namespace
}  // namespace outbox
