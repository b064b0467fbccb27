// Copyright (c) edge-outbox authors.
//
// A store over the fault-injecting file system, and a power cut: what the
// store suites that check durability share.

#ifndef OUTBOX_TESTS_STORE_POWER_CUT_STORE_H_
#define OUTBOX_TESTS_STORE_POWER_CUT_STORE_H_

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

namespace outbox::testing {

class PowerCutStoreTest : public ::testing::Test {
 protected:
  PowerCutStoreTest()
      : fs_(std::make_shared<FaultInjectionFileSystem>()),
        env_(NewCrashTestEnv(fs_)) {
    options_.tables = {"sales"};
  }

  // Opens the store at dir_/db with the broken variant `test`, if any.
  void Open(const StoreTestOptions& test = StoreTestOptions()) {
    auto store = OpenStoreWithEnv(options_, dir_.Sub("db"), env_.get(),
                                  /*read_only=*/false, test);
    ASSERT_OUTBOX_OK(store);
    store_.reset(static_cast<StoreImpl*>(store->release()));
  }

  // The power goes: nothing more reaches the disk and what was not synced is
  // lost. Then the store is opened again (not broken).
  void CutPowerAndReopen() {
    fs_->Kill();
    store_->Close().IgnoreError();
    store_.reset();
    ASSERT_OUTBOX_OK(fs_->SimulatePowerCut());
    fs_->Revive();
    Open();
  }

  // Settles every due event (up to 100) delivered, in one Settle, and returns
  // its write's mark (SettleResult::written; 0 if it failed).
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
    if (!settled.ok()) return 0;
    EXPECT_EQ(settled->applied, done.size());
    return settled->written;
  }

  // Commits a sale record and its event.
  absl::StatusOr<CommitResult> CommitSale(const std::string& sale) {
    Txn txn;
    txn.Put("sales", sale, "12.50");
    txn.Emit(MakeEvent("sale.created"));
    return store_->Commit(txn);
  }

  TempDir dir_;
  std::shared_ptr<FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  Options options_;
  std::unique_ptr<StoreImpl> store_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_STORE_POWER_CUT_STORE_H_
