// Copyright (c) edge-outbox authors.
//
// FaultInjectionFileSystem under a real rocksdb::DB (WAL recovery mode
// kPointInTimeRecovery), opened on NewCrashTestEnv(fs): NewCompositeEnv(fs)
// whose sleeps return at once.
//
// Invariant of the crash loop (CrashAtEveryOpLosesNoAcknowledgedSyncedWrite):
// whatever mutating operation the power is cut at, during DB::Open or the
// workload after it,
//   1. the DB reopens, without repair;
//   2. every sync=true Put that returned OK is there, with its value;
//   3. every key a previous reopen showed is still there;
//   4. the writes of the cut cycle that survived are a prefix of the order
//      they were issued in (point-in-time recovery leaves no holes).

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/options.h"
#include "tests/fault_fs/crash_test_env.h"
#include "tests/fault_fs/fault_injection_fs.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {
namespace {

class FaultInjectionDbTest : public ::testing::Test {
 protected:
  rocksdb::Status Open(std::unique_ptr<rocksdb::DB>* db) {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.env = env_.get();
    options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, dir_.Sub("db"), &raw);
    db->reset(raw);
    return s;
  }
  // Power is lost with the DB still open: nothing the shutdown does can
  // reach the disk. Then the disk shows what a power cut leaves.
  void CrashAndPowerCut(std::unique_ptr<rocksdb::DB>* db) {
    fs_->Kill();
    if (*db != nullptr) (*db)->Close().PermitUncheckedError();
    db->reset();
    ASSERT_OUTBOX_OK(fs_->SimulatePowerCut());
    fs_->Revive();
  }
  static std::string Get(rocksdb::DB& db, const std::string& key) {
    std::string value;
    rocksdb::Status s = db.Get(rocksdb::ReadOptions(), key, &value);
    if (s.IsNotFound()) return "<missing>";
    EXPECT_TRUE(s.ok()) << s.ToString();
    return value;
  }
  static rocksdb::WriteOptions Sync(bool sync) {
    rocksdb::WriteOptions options;
    options.sync = sync;
    return options;
  }

  TempDir dir_;
  std::shared_ptr<FaultInjectionFileSystem> fs_ =
      std::make_shared<FaultInjectionFileSystem>();
  std::unique_ptr<rocksdb::Env> env_ = NewCrashTestEnv(fs_);
};

TEST_F(FaultInjectionDbTest, SyncedWriteSurvivesPowerCut) {
  std::unique_ptr<rocksdb::DB> db;
  ASSERT_TRUE(Open(&db).ok());
  ASSERT_TRUE(db->Put(Sync(true), "order-1", "paid").ok());

  CrashAndPowerCut(&db);

  ASSERT_TRUE(Open(&db).ok());
  EXPECT_EQ(Get(*db, "order-1"), "paid");
}

// Deterministic because the power is cut (Kill) before Close(): nothing
// syncs the WAL after the last sync=true write, and two small writes never
// trigger a memtable flush.
TEST_F(FaultInjectionDbTest, UnsyncedWriteAfterLastSyncIsLost) {
  std::unique_ptr<rocksdb::DB> db;
  ASSERT_TRUE(Open(&db).ok());
  ASSERT_TRUE(db->Put(Sync(true), "order-1", "paid").ok());
  ASSERT_TRUE(db->Put(Sync(false), "order-2", "paid").ok());

  CrashAndPowerCut(&db);

  ASSERT_TRUE(Open(&db).ok());
  EXPECT_EQ(Get(*db, "order-1"), "paid");
  EXPECT_EQ(Get(*db, "order-2"), "<missing>");
}

// What is deterministic with RocksDB 7.8: the failed write reports NoSpace,
// and once space returns a reopened DB takes writes and kept the synced
// ones. Writing again on the *same* DB after a WAL write error is not safe:
// once the SstFileManager's auto-recovery clears the error, the next Put
// reuses the failed WAL writer, and Debian's librocksdb (built with
// assertions) aborts in
// WritableFileWriter::AssertFalseAndGetStatusForPrevError.
TEST_F(FaultInjectionDbTest, WalOutOfSpaceReportsNoSpaceAndReopenWritesAgain) {
  std::unique_ptr<rocksdb::DB> db;
  ASSERT_TRUE(Open(&db).ok());
  ASSERT_TRUE(db->Put(Sync(true), "order-1", "paid").ok());
  ErrorInjection injection;
  injection.file_kinds = kWalFile;
  fs_->InjectErrors(injection);

  rocksdb::Status s = db->Put(Sync(true), "order-2", "paid");
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();

  fs_->ClearErrors();  // Space returns.
  db->Close().PermitUncheckedError();
  db.reset();
  ASSERT_TRUE(Open(&db).ok());
  s = db->Put(Sync(true), "order-3", "paid");
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Get(*db, "order-1"), "paid");
  EXPECT_EQ(Get(*db, "order-3"), "paid");
}

// The steps of one crash cycle after DB::Open, in order: Puts alternate
// sync=true / sync=false, with a flush and a compaction in between so the
// cut lands in SST writes, MANIFEST updates and obsolete-file deletion too.
enum class Step { kSyncedPut, kUnsyncedPut, kFlush, kCompact };
std::vector<Step> Workload() {
  std::vector<Step> steps;
  auto puts = [&steps](int n) {
    for (int i = 0; i < n; ++i) {
      steps.push_back(i % 2 == 0 ? Step::kSyncedPut : Step::kUnsyncedPut);
    }
  };
  puts(20);
  steps.push_back(Step::kFlush);
  puts(20);
  steps.push_back(Step::kFlush);
  puts(20);
  steps.push_back(Step::kCompact);
  puts(12);
  return steps;
}

struct Cycle {
  std::vector<std::string> issued;     // Puts attempted, in order.
  std::set<std::string> acknowledged;  // sync=true Puts that returned OK.
  bool opened = false;
};

class CrashLoopTest : public FaultInjectionDbTest {
 protected:
  // Opens the DB and runs the workload until the first failure.
  Cycle RunCycle(int cycle, std::unique_ptr<rocksdb::DB>* db) {
    Cycle out;
    out.opened = Open(db).ok();
    if (!out.opened) return out;
    int n = 0;
    for (Step step : Workload()) {
      rocksdb::Status s;
      if (step == Step::kFlush) {
        s = (*db)->Flush(rocksdb::FlushOptions());
      } else if (step == Step::kCompact) {
        s = (*db)->CompactRange(rocksdb::CompactRangeOptions(), nullptr,
                                nullptr);
      } else {
        char key[32];
        std::snprintf(key, sizeof(key), "c%03d-k%02d", cycle, n++);
        out.issued.push_back(key);
        const bool sync = step == Step::kSyncedPut;
        s = (*db)->Put(Sync(sync), key, std::string(100, 'a' + cycle % 26));
        if (s.ok() && sync) out.acknowledged.insert(key);
      }
      if (!s.ok()) break;
    }
    return out;
  }
};

// Cycle n cuts the power at mutating op n of DB::Open + workload, until a
// cycle runs to its end uncut: then every op of the cycle has been a cut.
TEST_F(CrashLoopTest, CrashAtEveryOpLosesNoAcknowledgedSyncedWrite) {
  constexpr int kMaxCycles = 400;
  std::map<std::string, std::string> recovered;  // Keys a reopen showed.
  std::map<std::string, int> cuts_by_kind;
  int cut_in_open = 0;
  int cut_in_workload = 0;
  int cycles = 0;
  bool ran_uncut = false;

  for (int n = 0; n < kMaxCycles && !ran_uncut; ++n, ++cycles) {
    fs_->SetCrashAfterOps(static_cast<uint64_t>(n));
    std::unique_ptr<rocksdb::DB> db;
    const Cycle cycle = RunCycle(n, &db);
    std::string where = "after the workload";
    if (!fs_->IsDead()) {
      ASSERT_TRUE(cycle.opened) << "open failed with power on, n=" << n;
      ran_uncut = true;
    } else {
      const FaultInjectionFileSystem::CrashPoint cut = *fs_->crash_point();
      where = std::string(OpKindName(cut.kind)) + " " + cut.path;
      ++cuts_by_kind[OpKindName(cut.kind)];
      ++(cycle.opened ? cut_in_workload : cut_in_open);
    }
    CrashAndPowerCut(&db);

    rocksdb::Status s = Open(&db);
    ASSERT_TRUE(s.ok()) << "reopen after cut at op " << n << " (" << where
                        << "): " << s.ToString();
    for (const auto& [key, value] : recovered) {
      ASSERT_EQ(Get(*db, key), value) << "lost after cut at op " << n;
    }
    bool hole = false;
    for (const std::string& key : cycle.issued) {
      const std::string value = Get(*db, key);
      if (cycle.acknowledged.count(key) != 0) {
        ASSERT_NE(value, "<missing>")
            << "acknowledged " << key << " lost, cut at op " << n << " ("
            << where << ")";
      }
      if (value == "<missing>") {
        hole = true;
      } else {
        ASSERT_FALSE(hole) << key << " survived but an earlier write did not"
                           << ", cut at op " << n << " (" << where << ")";
        recovered[key] = value;
      }
    }
    ASSERT_TRUE(db->Close().ok());
  }

  std::string kinds;
  for (const auto& [kind, count] : cuts_by_kind) {
    kinds += " " + kind + "=" + std::to_string(count);
  }
  std::printf(
      "crash cycles: %d (cut in open %d, in workload %d, last uncut); cuts "
      "by kind:%s; keys recovered %zu; mutating ops %llu (%s)\n",
      cycles, cut_in_open, cut_in_workload, kinds.c_str(), recovered.size(),
      static_cast<unsigned long long>(fs_->total_ops()),
      fs_->OpCountsString().c_str());
  EXPECT_TRUE(ran_uncut) << "the workload outgrew " << kMaxCycles << " cuts";
}

}  // namespace
}  // namespace outbox::testing
