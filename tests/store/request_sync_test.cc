// Copyright (c) edge-outbox authors.
//
// Store::RequestSync and DurableMark: a write's mark (SettleResult::written)
// is durable once DurableMark reaches it, which a background sync (asked for
// and not waited on) or any synced write brings about; the wakeup says when.
// Each test cuts the power (the fault-injecting file system drops what was
// not synced) and reopens, to check that a mark said durable really was.

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/store/power_cut_store.h"

namespace outbox {
namespace {

class RequestSyncTest : public testing::PowerCutStoreTest {
 protected:
  void SetUp() override { OpenWatched(); }

  void OpenWatched() {
    Open();
    store_->SetWakeup([this] {
      absl::MutexLock l(&mu_);
      ++wakeups_;
    });
  }

  // Settles every due event delivered; returns the write's mark.
  uint64_t SettleAllDelivered() {
    auto due = store_->NextDue(100);
    EXPECT_TRUE(due.ok()) << due.status();
    if (!due.ok()) return 0;
    std::vector<Settlement> done;
    for (const PendingEvent& e : due->events) {
      Settlement s;
      s.kind = Settlement::Kind::kDelivered;
      s.event = e;
      done.push_back(s);
    }
    auto settled = store_->Settle(done);
    EXPECT_TRUE(settled.ok()) << settled.status();
    return settled.ok() ? settled->written : 0;
  }

  // Waits for the store's next wakeup after `seen` of them. (Bounded only
  // so that a broken syncer fails the test instead of hanging it.)
  bool AwaitWakeup(int seen) {
    absl::MutexLock l(&mu_);
    auto more = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return wakeups_ > seen;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&more), absl::Minutes(2));
  }

  int Wakeups() {
    absl::MutexLock l(&mu_);
    return wakeups_;
  }

  size_t Pending() {
    auto stats = store_->GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->pending_events : ~size_t{0};
  }

  absl::Mutex mu_;
  int wakeups_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST_F(RequestSyncTest, ARequestedSyncMakesASettlementSurviveAPowerCut) {
  ASSERT_OUTBOX_OK(CommitSale("sale-1"));
  ASSERT_OUTBOX_OK(CommitSale("sale-2"));
  const uint64_t written = SettleAllDelivered();
  ASSERT_GT(written, 0u);
  // Settle is not synced: its mark is not durable yet.
  EXPECT_LT(store_->DurableMark(), written);
  const int seen = Wakeups();
  ASSERT_OUTBOX_OK(store_->RequestSync(written));
  ASSERT_TRUE(AwaitWakeup(seen));
  EXPECT_GE(store_->DurableMark(), written);
  CutPowerAndReopen();
  EXPECT_EQ(Pending(), 0u);
}

TEST_F(RequestSyncTest, WithoutARequestTheSettlementIsLostInAPowerCut) {
  // The control for the test above: the same settlement, never synced.
  ASSERT_OUTBOX_OK(CommitSale("sale-1"));
  ASSERT_OUTBOX_OK(CommitSale("sale-2"));
  const uint64_t written = SettleAllDelivered();
  EXPECT_LT(store_->DurableMark(), written);
  CutPowerAndReopen();
  EXPECT_EQ(Pending(), 2u);  // sent again, with the same ids
}

TEST_F(RequestSyncTest, ASyncedCommitRaisesTheDurableMarkWithoutARequest) {
  ASSERT_OUTBOX_OK(CommitSale("sale-1"));
  const uint64_t written = SettleAllDelivered();
  EXPECT_LT(store_->DurableMark(), written);
  // A producer's synced commit covers every write before it: group commit
  // shares its fsync.
  ASSERT_OUTBOX_OK(CommitSale("sale-2"));
  EXPECT_GT(store_->DurableMark(), written);
  // A request it covered already is answered without a sync of its own.
  const int seen = Wakeups();
  ASSERT_OUTBOX_OK(store_->RequestSync(written));
  EXPECT_TRUE(AwaitWakeup(seen));
  CutPowerAndReopen();
  EXPECT_EQ(Pending(), 1u);  // sale-2's event; sale-1's stays delivered
}

TEST_F(RequestSyncTest, AFailedBackgroundSyncRefusesWritesUntilReopened) {
  ASSERT_OUTBOX_OK(CommitSale("sale-1"));
  const uint64_t written = SettleAllDelivered();
  testing::ErrorInjection eio;
  eio.error = testing::ErrorInjection::Error::kIOError;
  eio.writes = false;
  eio.syncs = true;
  eio.file_kinds = testing::kWalFile;
  fs_->InjectErrors(eio);
  const int seen = Wakeups();
  ASSERT_OUTBOX_OK(store_->RequestSync(written));
  ASSERT_TRUE(AwaitWakeup(seen));
  fs_->ClearErrors();
  // Never said durable, and nothing is acknowledged from here on.
  EXPECT_LT(store_->DurableMark(), written);
  auto refused = CommitSale("sale-2");
  EXPECT_STATUS_CODE(refused, absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("reopen"), absl::string_view::npos);
  EXPECT_FALSE(store_->RequestSync(written + 1).ok());
  CutPowerAndReopen();
  EXPECT_EQ(Pending(), 1u);  // the settlement was lost: sent again
  ASSERT_OUTBOX_OK(CommitSale("sale-3"));
}

TEST_F(RequestSyncTest, AFullDiskDropsTheSyncAndTheReopenMakesItDurable) {
  ASSERT_OUTBOX_OK(CommitSale("sale-1"));
  const uint64_t written = SettleAllDelivered();
  testing::ErrorInjection full;
  full.error = testing::ErrorInjection::Error::kNoSpace;
  full.file_kinds = testing::kWalFile;
  fs_->InjectErrors(full);
  const int seen = Wakeups();
  ASSERT_OUTBOX_OK(store_->RequestSync(written));
  ASSERT_TRUE(AwaitWakeup(seen));
  EXPECT_LT(store_->DurableMark(), written);
  EXPECT_STATUS_CODE(CommitSale("sale-2"),
                     absl::StatusCode::kResourceExhausted);
  // Space returns: the next write reopens the store, whose recovery made
  // everything written before durable.
  fs_->ClearErrors();
  ASSERT_OUTBOX_OK(CommitSale("sale-3"));
  EXPECT_GE(store_->DurableMark(), written);
  CutPowerAndReopen();
  EXPECT_EQ(Pending(), 1u);  // sale-3's; sale-1's stays delivered
}

TEST_F(RequestSyncTest, CloseStopsTheSyncerAndLaterRequestsFail) {
  ASSERT_OUTBOX_OK(CommitSale("sale-1"));
  const uint64_t written = SettleAllDelivered();
  ASSERT_OUTBOX_OK(store_->RequestSync(written));
  ASSERT_OUTBOX_OK(store_->Close());
  EXPECT_STATUS_CODE(store_->RequestSync(written + 1),
                     absl::StatusCode::kFailedPrecondition);
  // Close synced the log: the settlement survives a cut after it.
  store_.reset();
  ASSERT_OUTBOX_OK(fs_->SimulatePowerCut());
  OpenWatched();
  EXPECT_EQ(Pending(), 0u);
}

}  // namespace
}  // namespace outbox
