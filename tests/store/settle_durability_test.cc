// Copyright (c) edge-outbox authors.
//
// Store::Settle writes without an fsync of its own: a power cut before the
// next synced write (Sync, or a Commit with Options::sync) may undo it, and
// then the events are pending again, to be sent again with the same ids;
// after that synced write it survives. Each test cuts the power (the
// fault-injecting file system drops what was not synced) and reopens.

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/store_impl.h"
#include "tests/fault_fs/crash_test_env.h"
#include "tests/fault_fs/fault_injection_fs.h"
#include "tests/testing/events.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using testing::MakeEvent;

class SettleDurabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = std::make_shared<testing::FaultInjectionFileSystem>();
    env_ = testing::NewCrashTestEnv(fs_);
    options_.tables = {"sales"};
    Open();
  }

  void Open() {
    auto store = OpenStoreWithEnv(options_, dir_.Sub("db"), env_.get(),
                                  /*read_only=*/false, test_);
    ASSERT_OUTBOX_OK(store);
    store_ = std::move(*store);
  }

  // The power goes: nothing more reaches the disk, unsynced data is lost.
  void CutPowerAndReopen() {
    fs_->Kill();
    store_->Close().IgnoreError();
    store_.reset();
    ASSERT_OUTBOX_OK(fs_->SimulatePowerCut());
    fs_->Revive();
    Open();
  }

  std::string CommitSale(const std::string& sale) {
    Txn txn;
    txn.Put("sales", sale, "12.50");
    const std::string id = txn.Emit(MakeEvent("sale.created"));
    EXPECT_OUTBOX_OK(store_->Commit(txn));
    return id;
  }

  void SettleAllDelivered() {
    auto due = store_->NextDue(100);
    ASSERT_OUTBOX_OK(due);
    std::vector<Settlement> done;
    for (const PendingEvent& e : due->events) {
      Settlement s;
      s.kind = Settlement::Kind::kDelivered;
      s.event = e;
      done.push_back(s);
    }
    auto settled = store_->Settle(done);
    ASSERT_OUTBOX_OK(settled);
    EXPECT_EQ(settled->applied, done.size());
  }

  std::vector<std::string> PendingIds() {
    std::vector<std::string> ids;
    auto pending = store_->ListPending(100);
    EXPECT_TRUE(pending.ok()) << pending.status();
    if (pending.ok()) {
      for (const PendingEvent& e : *pending) ids.push_back(e.id);
    }
    return ids;
  }

  uint64_t DeliveredTotal() {
    auto stats = store_->GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->delivered_total : ~uint64_t{0};
  }

  testing::TempDir dir_;
  std::shared_ptr<testing::FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  Options options_;
  StoreTestOptions test_;
  std::unique_ptr<Store> store_;
};

TEST_F(SettleDurabilityTest, CutBeforeAnySyncMeansTheEventsArePendingAgain) {
  const std::string a = CommitSale("sale-1");
  const std::string b = CommitSale("sale-2");
  SettleAllDelivered();
  EXPECT_TRUE(PendingIds().empty());
  CutPowerAndReopen();
  // Allowed: resent with the same ids. Never half of the settlement.
  EXPECT_EQ(PendingIds(), (std::vector<std::string>{a, b}));
  EXPECT_EQ(DeliveredTotal(), 0u);
}

TEST_F(SettleDurabilityTest, SyncMakesTheSettlementDurable) {
  CommitSale("sale-1");
  CommitSale("sale-2");
  SettleAllDelivered();
  ASSERT_OUTBOX_OK(store_->Sync());
  CutPowerAndReopen();
  EXPECT_TRUE(PendingIds().empty());
  EXPECT_EQ(DeliveredTotal(), 2u);
}

TEST_F(SettleDurabilityTest, ALaterSyncedCommitMakesTheSettlementDurable) {
  CommitSale("sale-1");
  SettleAllDelivered();
  const std::string later = CommitSale("sale-2");
  CutPowerAndReopen();
  EXPECT_EQ(PendingIds(), std::vector<std::string>{later});
  EXPECT_EQ(DeliveredTotal(), 1u);
}

TEST_F(SettleDurabilityTest, SingleEventFormsAreSynced) {
  CommitSale("sale-1");
  auto due = store_->NextDue(1);
  ASSERT_OUTBOX_OK(due);
  ASSERT_OUTBOX_OK(store_->MarkDelivered(due->events.at(0)));
  CutPowerAndReopen();
  EXPECT_TRUE(PendingIds().empty());
  EXPECT_EQ(DeliveredTotal(), 1u);
}

}  // namespace
}  // namespace outbox
