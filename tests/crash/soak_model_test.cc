// Copyright (c) edge-outbox authors.
//
// SoakModel's checks fire on the violations they name. The broken-store
// suite proves the soak catches lost commits, half-written ones, lost
// acknowledgements and miscounted counters; these cover the other kinds and
// observations, which no broken store variant produces, on a real store with
// a hand-written receiver log and acknowledgements the test reports itself.

#include "tests/crash/soak_model.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rocksdb/env.h"
#include "tests/crash/observed_store.h"
#include "tests/crash/soak_disk.h"
#include "tests/crash/soak_records.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {
namespace {

class SoakModelTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(Open()); }

  void Open() {
    Options options;
    options.tables = {kSoakTable};
    options.clock = &clock_;
    auto store = Store::Open(options, dir_.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    store_ = std::move(*store);
    observed_ = std::make_unique<ObservedStore>(store_.get(), model_.acks(),
                                                [this] { return log_.size(); });
  }

  ModelTxn MakeTxn(const std::string& ordering_key,
                   const std::string& idempotency_key = "") {
    ModelTxn t;
    t.serial = next_serial_++;
    t.record_keys = {SoakRecordKey(t.serial, 0)};
    Event e;
    e.type = "sale.created";
    e.ordering_key = ordering_key;
    e.payload = SoakPayload(t.serial, 0, t.record_keys);
    t.record_value = SoakRecordValue({t.txn.Emit(e)});
    t.txn.Put(kSoakTable, t.record_keys[0], t.record_value);
    if (!idempotency_key.empty()) t.txn.SetIdempotencyKey(idempotency_key);
    return t;
  }

  // Commits a new transaction; returns its event id.
  std::string Commit(const std::string& ordering_key = "",
                     const std::string& idempotency_key = "") {
    const size_t index = model_.Add(MakeTxn(ordering_key, idempotency_key));
    absl::StatusOr<CommitResult> result =
        observed_->Commit(model_.txn(index).txn);
    EXPECT_OUTBOX_OK(result);
    model_.OnCommit(index, result, ++order_, clock_.Now(), 0,
                    /*power_on=*/true, &violations_);
    return model_.txn(index).txn.events()[0].id;
  }

  void Receive(const std::string& id, Answer answer,
               const std::string& body = "") {
    ReceivedRequest r;
    r.arrival = log_.size();
    r.webhook_id = id;
    r.body = body;
    if (body.empty()) {
      absl::StatusOr<PendingEvent> pending = store_->FindPending(id);
      if (pending.ok()) r.body = pending->payload;
    }
    r.answer = answer;
    log_.push_back(r);
  }

  // Acknowledges `id` as the agent does.
  void Deliver(const std::string& id) {
    absl::StatusOr<PendingEvent> pending = store_->FindPending(id);
    ASSERT_OUTBOX_OK(pending);
    ASSERT_OUTBOX_OK(observed_->MarkDelivered(*pending));
  }

  // Closes the store, reads its files as the soak does after a cut (then
  // lets `damage` change what was read), reopens it and checks.
  std::vector<ViolationKind> Check(
      const std::function<void(DiskState*)>& damage = nullptr) {
    EXPECT_OUTBOX_OK(store_->Close());
    observed_.reset();
    store_.reset();
    absl::StatusOr<DiskState> disk =
        ReadDiskState(rocksdb::Env::Default(), dir_.Sub("db"));
    EXPECT_OUTBOX_OK(disk);
    if (damage) damage(&*disk);
    Open();
    model_.Check(store_.get(), *disk, log_, SIZE_MAX, &violations_);
    std::vector<ViolationKind> kinds;
    for (const Violation& v : violations_) kinds.push_back(v.kind);
    return kinds;
  }

  TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<Store> store_;
  SoakModel model_;
  std::unique_ptr<ObservedStore> observed_;
  std::vector<ReceivedRequest> log_;
  std::vector<Violation> violations_;
  uint64_t next_serial_ = 0;
  uint64_t order_ = 0;
};

using Kinds = std::vector<ViolationKind>;

TEST_F(SoakModelTest, DeliveredInOrderIsClean) {
  const std::string a = Commit("k");
  const std::string b = Commit("k");
  Receive(a, Answer::kOk);
  Deliver(a);
  Receive(b, Answer::kServerError);
  EXPECT_EQ(Check(), Kinds());
}

TEST_F(SoakModelTest, LaterEventOfAKeyArrivingFirstIsOrderBroken) {
  const std::string a = Commit("k");
  const std::string b = Commit("k");
  Receive(b, Answer::kServerError);
  Receive(a, Answer::kServerError);
  EXPECT_EQ(Check(), Kinds{ViolationKind::kOrderBroken});
}

TEST_F(SoakModelTest, ResendWithAnotherBodyIsEventChanged) {
  const std::string a = Commit();
  Receive(a, Answer::kLostAnswer);
  Receive(a, Answer::kOk, "{\"txn\":0,\"n\":0,\"records\":[\"other\"]}");
  Deliver(a);
  EXPECT_EQ(Check(), Kinds{ViolationKind::kEventChanged});
}

TEST_F(SoakModelTest, EventGoneWithoutA2xxIsRecordWithoutEvent) {
  const std::string a = Commit();
  Receive(a, Answer::kLostAnswer);  // the receiver has it; no 2xx came back
  Deliver(a);
  // The store also counted it delivered, beyond the receiver's 2xx answers.
  EXPECT_EQ(Check(), (Kinds{ViolationKind::kDeliveredTotalWrong,
                            ViolationKind::kRecordWithoutEvent}));
}

TEST_F(SoakModelTest, ReceiptOfAnIdNeverCommittedIsUncommittedEventSent) {
  Commit();
  Receive("01890000-0000-7000-8000-000000000000", Answer::kOk, "{}");
  EXPECT_EQ(Check(), Kinds{ViolationKind::kUncommittedEventSent});
}

TEST_F(SoakModelTest, FreshAnswerToARepeatedKeyIsIdempotencyBroken) {
  Commit("", "order-1");
  const size_t repeat = model_.Add(MakeTxn("", "order-1"));
  CommitResult fresh;  // what a store that forgot the key would answer
  for (const Txn::EmittedEvent& e : model_.txn(repeat).txn.events()) {
    fresh.event_ids.push_back(e.id);
  }
  model_.OnCommit(repeat, fresh, ++order_, clock_.Now(), 0, true, &violations_);
  EXPECT_EQ(Check(), Kinds{ViolationKind::kIdempotencyBroken});
}

TEST_F(SoakModelTest, RepeatedKeyAnsweredAsDuplicateIsClean) {
  Commit("", "order-1");
  Commit("", "order-1");  // the store answers with the first commit's ids
  EXPECT_EQ(Check(), Kinds());
}

// The store gets the delivered transaction's event again behind the model's
// back (the same ids, as a replayed or resurrected entry would have).
TEST_F(SoakModelTest, DeliveredEventBackInTheStoreIsResurrected) {
  const std::string a = Commit();
  Receive(a, Answer::kOk);
  Deliver(a);
  ASSERT_EQ(Check(), Kinds());
  ASSERT_OUTBOX_OK(store_->Commit(model_.txn(0).txn));
  EXPECT_EQ(Check(), Kinds{ViolationKind::kResurrected});
}

TEST_F(SoakModelTest, RecordGoneWhileItsEventIsPendingIsEventWithoutRecord) {
  Commit();
  Txn erase;  // behind the model's back
  erase.Delete(kSoakTable, model_.txn(0).record_keys[0]);
  ASSERT_OUTBOX_OK(store_->Commit(erase));
  EXPECT_EQ(Check(), (Kinds{ViolationKind::kEventWithoutRecord,
                            ViolationKind::kEventWithoutRecord}));
}

TEST_F(SoakModelTest, CommitFailingWithThePowerOnIsUnexpectedError) {
  const size_t index = model_.Add(MakeTxn(""));
  model_.OnCommit(index, absl::UnavailableError("I/O error"), ++order_,
                  clock_.Now(), 0, /*power_on=*/true, &violations_);
  EXPECT_EQ(Check(), Kinds{ViolationKind::kUnexpectedError});
}

TEST_F(SoakModelTest, AcknowledgedEventsAreCountedOnce) {
  const std::string a = Commit();
  const std::string b = Commit();
  Receive(a, Answer::kOk);
  Deliver(a);
  Receive(b, Answer::kOk);
  Deliver(b);
  EXPECT_EQ(Check(), Kinds());
  EXPECT_EQ(model_.acks()->counts().confirmed, 2u);
}

// The agent was told 2xx and MarkDelivered returned synced, but the store
// still holds the event (the ledger is told directly; the store never was).
TEST_F(SoakModelTest, SyncedAckThatDidNotRemoveTheEventIsDurableAckLost) {
  const std::string a = Commit();
  Receive(a, Answer::kOk);
  model_.acks()->OnCalled(a);
  model_.acks()->OnReturned(a, /*synced=*/true, log_.size());
  EXPECT_EQ(Check(), Kinds{ViolationKind::kDurableAckLost});
}

// An unsynced ack that a cut undid: allowed, the event goes out again.
TEST_F(SoakModelTest, UncoveredAckUndoneByACutIsClean) {
  const std::string a = Commit();
  Receive(a, Answer::kOk);
  model_.acks()->OnCalled(a);
  model_.acks()->OnReturned(a, /*synced=*/false, log_.size());
  EXPECT_EQ(Check(), Kinds());
  EXPECT_EQ(model_.acks()->counts().lost_uncovered, 1u);
}

// The same unsynced ack, but a later synced commit returned: it was durable.
TEST_F(SoakModelTest, UnsyncedAckCoveredByALaterCommitIsDurable) {
  const std::string a = Commit();
  Receive(a, Answer::kOk);
  model_.acks()->OnCalled(a);
  model_.acks()->OnReturned(a, /*synced=*/false, log_.size());
  Commit();  // synced: covers the ack before it
  EXPECT_EQ(Check(), Kinds{ViolationKind::kDurableAckLost});
}

// A workflow's last settlement (its compensation finished) returned and a
// synced write covered it, but the store still holds its event.
TEST_F(SoakModelTest, CoveredFinalWorkflowDeliveryStoredAgainIsDurableAckLost) {
  const std::string a = Commit();
  model_.acks()->OnWorkflowDeliveryReturned(a, /*final=*/true);
  model_.acks()->OnCancelAttempted(a);  // no excuse once compensated
  Commit();                             // synced: covers it
  EXPECT_EQ(Check(), Kinds{ViolationKind::kDurableAckLost});
}

// A completed workflow's event pending again without any cancel for it.
TEST_F(SoakModelTest, CoveredCompletedWorkflowStoredAgainIsDurableAckLost) {
  const std::string a = Commit();
  model_.acks()->OnWorkflowDeliveryReturned(a, /*final=*/false);
  Commit();
  EXPECT_EQ(Check(), Kinds{ViolationKind::kDurableAckLost});
}

// The same, but a cancel was made for it: the cancel queued it again.
TEST_F(SoakModelTest, CompletedWorkflowQueuedAgainByACancelIsClean) {
  const std::string a = Commit();
  model_.acks()->OnWorkflowDeliveryReturned(a, /*final=*/false);
  model_.acks()->OnCancelAttempted(a);
  Commit();
  EXPECT_EQ(Check(), Kinds());
}

TEST_F(SoakModelTest, SendAfterADurableAckIsDurableAckLost) {
  const std::string a = Commit();
  Receive(a, Answer::kOk);
  Deliver(a);
  Receive(a, Answer::kOk, model_.txn(0).txn.events()[0].event.payload);
  EXPECT_EQ(Check(), Kinds{ViolationKind::kDurableAckLost});
}

TEST_F(SoakModelTest, PersistedDeliveredTotalOffByOneIsDeliveredTotalWrong) {
  const std::string a = Commit();
  Receive(a, Answer::kOk);
  Deliver(a);
  EXPECT_EQ(Check([](DiskState* disk) { disk->queue.set_delivered_total(2); }),
            Kinds{ViolationKind::kDeliveredTotalWrong});
}

TEST_F(SoakModelTest, PersistedPendingCountOffByOneIsStoredCountersWrong) {
  Commit();
  EXPECT_EQ(Check([](DiskState* disk) {
              disk->queue.set_pending_count(disk->queue.pending_count() + 1);
            }),
            Kinds{ViolationKind::kStoredCountersWrong});
}

TEST_F(SoakModelTest, EntryBelowThePersistedHeadIsStoredCountersWrong) {
  Commit();
  Commit();
  EXPECT_EQ(Check([](DiskState* disk) {
              disk->queue.set_head_seq(disk->queue.head_seq() + 1);
            }),
            Kinds{ViolationKind::kStoredCountersWrong});
}

}  // namespace
}  // namespace outbox::testing
