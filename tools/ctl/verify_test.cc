// Copyright (c) edge-outbox authors.
//
// outboxctl verify against the real binary: a sound store (with a workflow,
// dead letters and idempotency keys) verifies, writing nothing; each kind
// of damage, made with RocksDB directly in a copy of the store, is reported
// by name and exits 1.

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/keys.h"
#include "proto/storage.pb.h"
#include "tests/testing/ctl_fixture.h"
#include "tests/testing/raw_store.h"
#include "tests/testing/status.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class VerifyTest : public CtlTest {
 protected:
  // A store with one of each: pending events (one keyed, one with an
  // idempotency key), a dead letter, a workflow that finished (state,
  // result row, retention index) and one running.
  void SetUp() override {
    CtlTest::SetUp();
    Event sale;
    sale.type = "sale.created";
    sale.payload = "{}";
    pending_ = Commit(sale);
    MakeDeadLetter(absl::Now());
    std::unique_ptr<Store> store = OpenStore();
    ASSERT_NE(store, nullptr);
    Txn txn;
    txn.Put("sales", "k", "v");
    keyed_ = txn.Emit(sale);
    txn.SetIdempotencyKey("order-1");
    ASSERT_OUTBOX_OK(store->Commit(txn));
    finished_ = Workflow(store.get(), storage::WORKFLOW_PHASE_COMPLETED);
    running_ = Workflow(store.get(), storage::WORKFLOW_PHASE_FORWARD);
    ASSERT_OUTBOX_OK(store->Close());
  }

  // Commits a workflow event and settles its first step into `phase`.
  std::string Workflow(Store* store, storage::WorkflowPhase phase) {
    Txn txn;
    txn.Put("sales", "order", "v");
    Event order;
    order.type = "order.created";
    order.payload = "{}";
    const std::string id = txn.Emit(order);
    EXPECT_OUTBOX_OK(store->Commit(txn));
    absl::StatusOr<PendingEvent> event = store->FindPending(id);
    EXPECT_OUTBOX_OK(event);
    storage::WorkflowState state;
    state.set_phase(phase);
    state.set_next_step(1);
    state.set_results(1);
    Settlement s;
    s.event = *event;
    s.kind = phase == storage::WORKFLOW_PHASE_COMPLETED
                 ? Settlement::Kind::kDelivered
                 : Settlement::Kind::kStepDone;
    if (phase == storage::WORKFLOW_PHASE_COMPLETED) {
      state.set_finished_unix_ms(absl::ToUnixMillis(absl::Now()));
    }
    s.workflow_state = state.SerializeAsString();
    storage::StepResult row;
    row.set_step("reserve");
    s.workflow_results = {row.SerializeAsString()};
    EXPECT_OUTBOX_OK(store->Settle({s}));
    return id;
  }

  void Raw(const std::function<void(rocksdb::DB*, const testing::RawFamilies&)>&
               edit) {
    testing::RawEdit(db(), edit);
  }

  // Rewrites the stored queue state (its counters) through `edit`, raw.
  static void EditQueueState(
      rocksdb::DB* d, const testing::RawFamilies& f,
      const std::function<void(storage::QueueState*)>& edit) {
    std::string value;
    ASSERT_TRUE(d->Get(rocksdb::ReadOptions(), f.at(keys::kMetaFamily),
                       keys::kQueueStateKey, &value)
                    .ok());
    storage::QueueState state;
    ASSERT_TRUE(state.ParseFromString(value));
    edit(&state);
    ASSERT_TRUE(d->Put(rocksdb::WriteOptions(), f.at(keys::kMetaFamily),
                       keys::kQueueStateKey, state.SerializeAsString())
                    .ok());
  }

  void Put(const char* family, const std::string& key,
           const std::string& value) {
    Raw([&](rocksdb::DB* d, const testing::RawFamilies& f) {
      ASSERT_TRUE(
          d->Put(rocksdb::WriteOptions(), f.at(family), key, value).ok());
    });
  }
  void Delete(const char* family, const std::string& key) {
    Raw([&](rocksdb::DB* d, const testing::RawFamilies& f) {
      ASSERT_TRUE(d->Delete(rocksdb::WriteOptions(), f.at(family), key).ok());
    });
  }

  // Runs verify and expects it to report `problem` and exit 1.
  void ExpectProblem(const std::string& problem) {
    sink::ExitResult r = Ctl({"verify"});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("problem:"));
    EXPECT_THAT(r.out, HasSubstr(problem));
    EXPECT_THAT(r.err, HasSubstr("problem(s)"));
  }

  std::string pending_, keyed_, finished_, running_;
};

TEST_F(VerifyTest, SoundStoreVerifiesAndNothingIsWritten) {
  const std::map<std::string, std::string> before = testing::FileContents(db());
  sink::ExitResult r = Ctl({"verify"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict:           sound"));
  EXPECT_THAT(r.out, Not(HasSubstr("problem:")));
  EXPECT_THAT(r.out, HasSubstr("incompat:workflows"));
  EXPECT_THAT(r.out, HasSubstr("workflows:         2 (2 result rows)"));
  EXPECT_EQ(testing::FileContents(db()), before);
}

TEST_F(VerifyTest, UndecodablePendingValue) {
  absl::StatusOr<PendingEvent> e = OpenStore()->FindPending(pending_);
  ASSERT_OUTBOX_OK(e);
  Put(keys::kPendingFamily, keys::Seq(e->seq), "\xff\xfe");
  ExpectProblem("does not decode as outbox.storage.OutboxEntry");
}

TEST_F(VerifyTest, PendingCounterDisagreesWithEntries) {
  Raw([&](rocksdb::DB* d, const testing::RawFamilies& f) {
    EditQueueState(d, f, [](storage::QueueState* state) {
      state->set_pending_count(state->pending_count() + 1);
    });
  });
  ExpectProblem("4 pending events; outbox.pending holds 3");
}

TEST_F(VerifyTest, DeadLetterGoneBehindTheCounter) {
  std::string id;
  Raw([&](rocksdb::DB* d, const testing::RawFamilies& f) {
    std::unique_ptr<rocksdb::Iterator> it(
        d->NewIterator(rocksdb::ReadOptions(), f.at(keys::kDeadFamily)));
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid());
    ASSERT_TRUE(
        d->Delete(rocksdb::WriteOptions(), f.at(keys::kDeadFamily), it->key())
            .ok());
  });
  ExpectProblem("1 dead letters; outbox.dead holds 0");
}

// A dead letter written for a pending event without removing its entry (a
// buggy writer, half a move): the event would be delivered and replayed.
// The counter is raised with it, so only the event's two places disagree.
TEST_F(VerifyTest, EventBothPendingAndDead) {
  Raw([&](rocksdb::DB* d, const testing::RawFamilies& f) {
    std::unique_ptr<rocksdb::Iterator> it(
        d->NewIterator(rocksdb::ReadOptions(), f.at(keys::kDeadFamily)));
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid());
    storage::DeadLetter letter;
    ASSERT_TRUE(letter.ParseFromString(it->value().ToString()));
    letter.mutable_entry()->set_event_id(pending_);
    ASSERT_TRUE(d->Put(rocksdb::WriteOptions(), f.at(keys::kDeadFamily),
                       pending_, letter.SerializeAsString())
                    .ok());
    EditQueueState(d, f, [](storage::QueueState* state) {
      state->set_dead_count(state->dead_count() + 1);
    });
  });
  ExpectProblem(absl::StrCat("event ", pending_, " is both pending and dead"));
  EXPECT_THAT(Ctl({"verify"}).out,
              HasSubstr("verdict:           1 problem(s)"));
}

TEST_F(VerifyTest, IdempotencyRecordWithoutExpiryIndex) {
  Raw([&](rocksdb::DB* d, const testing::RawFamilies& f) {
    std::unique_ptr<rocksdb::Iterator> it(
        d->NewIterator(rocksdb::ReadOptions(), f.at(keys::kIdempotencyFamily)));
    it->Seek(keys::kIdempotencyExpiryPrefix);
    ASSERT_TRUE(it->Valid());
    ASSERT_TRUE(d->Delete(rocksdb::WriteOptions(),
                          f.at(keys::kIdempotencyFamily), it->key())
                    .ok());
  });
  ExpectProblem("idempotency key \"order-1\" has no expiry index entry");
}

TEST_F(VerifyTest, ExpiryIndexPointingToNoRecord) {
  Delete(keys::kIdempotencyFamily, keys::IdempotencyRecordKey("order-1"));
  ExpectProblem("expiry index entry of \"order-1\" points to no record");
}

TEST_F(VerifyTest, ResultRowWithoutWorkflow) {
  Put(keys::kWorkflowFamily, keys::WorkflowResultKey(pending_, 0), "");
  ExpectProblem(
      absl::StrCat("result row 0 of ", pending_, " has no workflow state"));
}

TEST_F(VerifyTest, RunningWorkflowWhoseEventIsNotPending) {
  storage::WorkflowState state;
  state.set_phase(storage::WORKFLOW_PHASE_FORWARD);
  Put(keys::kWorkflowFamily, keys::WorkflowStateKey("gone-event"),
      state.SerializeAsString());
  ExpectProblem("workflow gone-event is running but its event is not pending");
}

TEST_F(VerifyTest, FinishedWorkflowMissingFromRetentionIndex) {
  Raw([&](rocksdb::DB* d, const testing::RawFamilies& f) {
    std::unique_ptr<rocksdb::Iterator> it(
        d->NewIterator(rocksdb::ReadOptions(), f.at(keys::kWorkflowFamily)));
    it->Seek(keys::kWorkflowFinishedPrefix);
    ASSERT_TRUE(it->Valid());
    ASSERT_EQ(it->key()[0], 'f');
    ASSERT_TRUE(d->Delete(rocksdb::WriteOptions(), f.at(keys::kWorkflowFamily),
                          it->key())
                    .ok());
  });
  ExpectProblem(absl::StrCat("finished workflow ", finished_,
                             " is missing from the retention index"));
}

TEST_F(VerifyTest, UndecodableWorkflowState) {
  Put(keys::kWorkflowFamily, keys::WorkflowStateKey(running_), "\xff\xfe");
  ExpectProblem("does not decode as outbox.storage.WorkflowState");
}

}  // namespace
}  // namespace outbox::ctl
