// Copyright (c) edge-outbox authors.
//
// FaultInjectionFileSystem on its own: each test drives the file system the
// way RocksDB does, cuts power, and looks at what the real disk holds.

#include "tests/fault_fs/fault_injection_fs.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "rocksdb/file_system.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {
namespace {

using rocksdb::FileOptions;
using rocksdb::FSWritableFile;
using rocksdb::IOOptions;
using rocksdb::IOStatus;

class FaultInjectionFsTest : public ::testing::Test {
 protected:
  std::unique_ptr<FSWritableFile> Create(const std::string& name) {
    std::unique_ptr<FSWritableFile> file;
    IOStatus s =
        fs_->NewWritableFile(Path(name), FileOptions(), &file, nullptr);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return file;
  }
  void Append(FSWritableFile& file, const std::string& data) {
    IOStatus s = file.Append(data, IOOptions(), nullptr);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Sync(FSWritableFile& file) {
    IOStatus s = file.Sync(IOOptions(), nullptr);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // A file written, synced, closed and named durably: the baseline a test
  // then tries to break.
  void WriteDurably(const std::string& name, const std::string& data) {
    std::unique_ptr<FSWritableFile> file = Create(name);
    ASSERT_NE(file, nullptr);
    Append(*file, data);
    Sync(*file);
    ASSERT_TRUE(file->Close(IOOptions(), nullptr).ok());
    SyncDir();
  }
  void SyncDir() {
    std::unique_ptr<rocksdb::FSDirectory> dir;
    ASSERT_TRUE(
        fs_->NewDirectory(dir_.path(), IOOptions(), &dir, nullptr).ok());
    IOStatus s = dir->Fsync(IOOptions(), nullptr);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void PowerCut() {
    ASSERT_OUTBOX_OK(fs_->SimulatePowerCut());
    fs_->Revive();
  }

  std::string Path(const std::string& name) const { return dir_.Sub(name); }
  bool Exists(const std::string& name) const {
    return std::filesystem::exists(Path(name));
  }
  // Read straight from the disk, not through the file system under test.
  std::string Contents(const std::string& name) const {
    std::ifstream in(Path(name), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

  TempDir dir_;
  // Syncs forwarded: these tests also exercise the real calls.
  std::shared_ptr<FaultInjectionFileSystem> fs_ =
      std::make_shared<FaultInjectionFileSystem>(
          rocksdb::FileSystem::Default(),
          FaultInjectionOptions{/*forward_syncs=*/true});
};

TEST_F(FaultInjectionFsTest, UnsyncedAppendsVanishAfterPowerCut) {
  std::unique_ptr<FSWritableFile> file = Create("000001.log");
  Append(*file, "synced|");
  Sync(*file);
  Append(*file, "unsynced");
  SyncDir();
  ASSERT_EQ(Contents("000001.log"), "synced|unsynced");

  PowerCut();

  EXPECT_EQ(Contents("000001.log"), "synced|");
}

TEST_F(FaultInjectionFsTest, CloseDoesNotMakeDataDurable) {
  std::unique_ptr<FSWritableFile> file = Create("000002.sst");
  Append(*file, "never synced");
  ASSERT_TRUE(file->Close(IOOptions(), nullptr).ok());
  SyncDir();

  PowerCut();

  ASSERT_TRUE(Exists("000002.sst"));
  EXPECT_EQ(Contents("000002.sst"), "");
}

TEST_F(FaultInjectionFsTest, RangeSyncDoesNotMakeDataDurable) {
  std::unique_ptr<FSWritableFile> file = Create("000003.sst");
  Append(*file, "range synced only");
  ASSERT_TRUE(file->RangeSync(0, 17, IOOptions(), nullptr).ok());
  SyncDir();

  PowerCut();

  EXPECT_EQ(Contents("000003.sst"), "");
}

TEST_F(FaultInjectionFsTest, FileCreatedWithoutDirFsyncVanishes) {
  std::unique_ptr<FSWritableFile> file = Create("000004.sst");
  Append(*file, "synced data, undurable name");
  Sync(*file);

  PowerCut();

  EXPECT_FALSE(Exists("000004.sst"));
}

TEST_F(FaultInjectionFsTest, RenameWithoutDirFsyncIsUndone) {
  WriteDurably("CURRENT", "MANIFEST-000001\n");
  std::unique_ptr<FSWritableFile> tmp = Create("000009.dbtmp");
  Append(*tmp, "MANIFEST-000009\n");
  Sync(*tmp);
  ASSERT_TRUE(tmp->Close(IOOptions(), nullptr).ok());
  ASSERT_TRUE(fs_->RenameFile(Path("000009.dbtmp"), Path("CURRENT"),
                              IOOptions(), nullptr)
                  .ok());
  ASSERT_EQ(Contents("CURRENT"), "MANIFEST-000009\n");

  PowerCut();

  EXPECT_EQ(Contents("CURRENT"), "MANIFEST-000001\n");
  EXPECT_FALSE(Exists("000009.dbtmp"));  // Its creation was never durable.
}

TEST_F(FaultInjectionFsTest, RenameFollowedByDirFsyncSurvives) {
  WriteDurably("CURRENT", "MANIFEST-000001\n");
  std::unique_ptr<FSWritableFile> tmp = Create("000009.dbtmp");
  Append(*tmp, "MANIFEST-000009\n");
  Sync(*tmp);
  ASSERT_TRUE(tmp->Close(IOOptions(), nullptr).ok());
  ASSERT_TRUE(fs_->RenameFile(Path("000009.dbtmp"), Path("CURRENT"),
                              IOOptions(), nullptr)
                  .ok());
  // How RocksDB makes a new CURRENT durable.
  std::unique_ptr<rocksdb::FSDirectory> dir;
  ASSERT_TRUE(fs_->NewDirectory(dir_.path(), IOOptions(), &dir, nullptr).ok());
  ASSERT_TRUE(dir->FsyncWithDirOptions(IOOptions(), nullptr,
                                       rocksdb::DirFsyncOptions("CURRENT"))
                  .ok());

  PowerCut();

  EXPECT_EQ(Contents("CURRENT"), "MANIFEST-000009\n");
  EXPECT_FALSE(Exists("000009.dbtmp"));
}

TEST_F(FaultInjectionFsTest, DeleteWithoutDirFsyncIsUndone) {
  WriteDurably("000005.log", "durable wal");
  ASSERT_TRUE(fs_->DeleteFile(Path("000005.log"), IOOptions(), nullptr).ok());
  ASSERT_FALSE(Exists("000005.log"));

  PowerCut();

  EXPECT_EQ(Contents("000005.log"), "durable wal");
}

TEST_F(FaultInjectionFsTest, LinkWithoutDirFsyncIsUndone) {
  WriteDurably("000006.sst", "table");
  ASSERT_TRUE(fs_->LinkFile(Path("000006.sst"), Path("000007.sst"), IOOptions(),
                            nullptr)
                  .ok());

  PowerCut();

  EXPECT_EQ(Contents("000006.sst"), "table");
  EXPECT_FALSE(Exists("000007.sst"));
}

TEST_F(FaultInjectionFsTest, TruncateOfSyncedBytesIsUndoneUntilSynced) {
  WriteDurably("000008.log", "0123456789");
  std::unique_ptr<FSWritableFile> file;
  ASSERT_TRUE(
      fs_->ReopenWritableFile(Path("000008.log"), FileOptions(), &file, nullptr)
          .ok());
  ASSERT_TRUE(file->Truncate(4, IOOptions(), nullptr).ok());
  ASSERT_EQ(Contents("000008.log"), "0123");

  PowerCut();

  EXPECT_EQ(Contents("000008.log"), "0123456789");
}

TEST_F(FaultInjectionFsTest, RecreatingADurableFileRestoresItsOldBytes) {
  WriteDurably("OPTIONS-000010", "old options");
  std::unique_ptr<FSWritableFile> file = Create("OPTIONS-000010");  // O_TRUNC
  Append(*file, "new, unsynced");

  PowerCut();

  EXPECT_EQ(Contents("OPTIONS-000010"), "old options");
}

TEST_F(FaultInjectionFsTest, RandomWriteOverSyncedBytesIsUndoneUntilSynced) {
  WriteDurably("000021.sst", "0123456789");
  std::unique_ptr<rocksdb::FSRandomRWFile> file;
  ASSERT_TRUE(
      fs_->NewRandomRWFile(Path("000021.sst"), FileOptions(), &file, nullptr)
          .ok());
  ASSERT_TRUE(file->Write(2, "xy", IOOptions(), nullptr).ok());
  ASSERT_EQ(Contents("000021.sst"), "01xy456789");

  PowerCut();

  EXPECT_EQ(Contents("000021.sst"), "0123456789");
}

TEST_F(FaultInjectionFsTest, NoSpaceInjectionFailsAppendUntilCleared) {
  std::unique_ptr<FSWritableFile> file = Create("000011.log");
  fs_->InjectErrors(ErrorInjection{});  // ENOSPC on every write.

  IOStatus s = file->Append("payload", IOOptions(), nullptr);
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_EQ(Contents("000011.log"), "");  // A failed write writes nothing.

  fs_->ClearErrors();
  s = file->Append("payload", IOOptions(), nullptr);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Contents("000011.log"), "payload");
  EXPECT_EQ(fs_->injected_error_count(), 1u);
}

TEST_F(FaultInjectionFsTest, InjectionHitsOnlyTheChosenFileKind) {
  std::unique_ptr<FSWritableFile> wal = Create("000012.log");
  std::unique_ptr<FSWritableFile> table = Create("000013.sst");
  ErrorInjection injection;
  injection.file_kinds = kWalFile;
  fs_->InjectErrors(injection);

  EXPECT_TRUE(wal->Append("x", IOOptions(), nullptr).IsNoSpace());
  EXPECT_TRUE(table->Append("x", IOOptions(), nullptr).ok());
}

TEST_F(FaultInjectionFsTest, InjectionLimitedToNextKCallsThenStops) {
  std::unique_ptr<FSWritableFile> file = Create("MANIFEST-000014");
  ErrorInjection injection;
  injection.error = ErrorInjection::Error::kIOError;
  injection.times = 2;
  fs_->InjectErrors(injection);

  IOStatus first = file->Append("a", IOOptions(), nullptr);
  IOStatus second = file->Append("b", IOOptions(), nullptr);
  IOStatus third = file->Append("c", IOOptions(), nullptr);

  EXPECT_TRUE(first.IsIOError() && !first.IsNoSpace()) << first.ToString();
  EXPECT_TRUE(second.IsIOError()) << second.ToString();
  EXPECT_TRUE(third.ok()) << third.ToString();
  EXPECT_EQ(Contents("MANIFEST-000014"), "c");
}

TEST_F(FaultInjectionFsTest, FailedSyncLeavesDataUndurable) {
  std::unique_ptr<FSWritableFile> file = Create("000015.log");
  SyncDir();
  Append(*file, "written, sync failed");
  ErrorInjection injection;
  injection.error = ErrorInjection::Error::kIOError;
  injection.writes = false;
  injection.syncs = true;
  fs_->InjectErrors(injection);
  EXPECT_TRUE(file->Sync(IOOptions(), nullptr).IsIOError());
  fs_->ClearErrors();

  PowerCut();

  EXPECT_EQ(Contents("000015.log"), "");
}

TEST_F(FaultInjectionFsTest, DeadFileSystemRejectsMutationsWithoutEffect) {
  std::unique_ptr<FSWritableFile> file = Create("000016.log");
  fs_->SetCrashAfterOps(1);
  Append(*file, "before");  // The one op let through.

  EXPECT_TRUE(file->Append("after", IOOptions(), nullptr).IsIOError());
  EXPECT_TRUE(file->Sync(IOOptions(), nullptr).IsIOError());
  EXPECT_TRUE(fs_->RenameFile(Path("000016.log"), Path("000017.log"),
                              IOOptions(), nullptr)
                  .IsIOError());
  EXPECT_TRUE(fs_->IsDead());
  EXPECT_EQ(Contents("000016.log"), "before");
  EXPECT_FALSE(Exists("000017.log"));
  ASSERT_TRUE(fs_->crash_point().has_value());
  EXPECT_EQ(fs_->crash_point()->kind, OpKind::kWrite);
  EXPECT_EQ(fs_->crash_point()->ops_before, 2u);  // create + append.
}

TEST_F(FaultInjectionFsTest, CrashHookSeesKindAndPathAndKills) {
  WriteDurably("CURRENT", "MANIFEST-000001\n");
  fs_->SetCrashHook([](OpKind kind, const std::string& path) {
    return kind == OpKind::kRenameFile && path.find(".dbtmp") != path.npos;
  });
  std::unique_ptr<FSWritableFile> tmp = Create("000018.dbtmp");
  Append(*tmp, "MANIFEST-000018\n");
  Sync(*tmp);

  EXPECT_TRUE(fs_->RenameFile(Path("000018.dbtmp"), Path("CURRENT"),
                              IOOptions(), nullptr)
                  .IsIOError());
  EXPECT_TRUE(fs_->IsDead());
  EXPECT_EQ(Contents("CURRENT"), "MANIFEST-000001\n");
}

TEST_F(FaultInjectionFsTest, HandleFromBeforePowerCutIsRefused) {
  std::unique_ptr<FSWritableFile> file = Create("000019.log");
  PowerCut();

  EXPECT_TRUE(file->Append("late", IOOptions(), nullptr).IsIOError());
}

TEST_F(FaultInjectionFsTest, CountsOpsPerKind) {
  fs_->ResetOpCounts();
  WriteDurably("000020.sst", "abc");  // create, write, sync, sync_dir.
  ASSERT_TRUE(fs_->DeleteFile(Path("000020.sst"), IOOptions(), nullptr).ok());

  EXPECT_EQ(fs_->op_count(OpKind::kCreateFile), 1u);
  EXPECT_EQ(fs_->op_count(OpKind::kWrite), 1u);
  EXPECT_EQ(fs_->op_count(OpKind::kSync), 1u);
  EXPECT_EQ(fs_->op_count(OpKind::kSyncDir), 1u);
  EXPECT_EQ(fs_->op_count(OpKind::kDeleteFile), 1u);
  EXPECT_EQ(fs_->total_ops(), 5u);
  EXPECT_EQ(fs_->OpCountsString(),
            "create=1 write=1 sync=1 sync_dir=1 delete=1");
}

TEST_F(FaultInjectionFsTest, ConcurrentWritersEachKeepTheirSyncedPrefix) {
  constexpr int kThreads = 4;
  constexpr int kRecords = 200;
  std::vector<std::unique_ptr<FSWritableFile>> files;
  for (int t = 0; t < kThreads; ++t) {
    files.push_back(Create("00010" + std::to_string(t) + ".log"));
  }
  SyncDir();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRecords; ++i) {
        EXPECT_TRUE(files[t]->Append("r", IOOptions(), nullptr).ok());
        // Sync after the first half only: the second half must vanish.
        if (i < kRecords / 2) {
          EXPECT_TRUE(files[t]->Sync(IOOptions(), nullptr).ok());
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  PowerCut();

  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(Contents("00010" + std::to_string(t) + ".log"),
              std::string(kRecords / 2, 'r'));
  }
}

}  // namespace
}  // namespace outbox::testing
