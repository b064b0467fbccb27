// Copyright (c) edge-outbox authors.

#include "tests/fault_fs/crash_test_env.h"

#include <utility>

#include "rocksdb/system_clock.h"

namespace outbox::testing {
namespace {

class NoSleepClock : public rocksdb::SystemClockWrapper {
 public:
  explicit NoSleepClock(const std::shared_ptr<rocksdb::SystemClock>& base)
      : SystemClockWrapper(base) {}
  const char* Name() const override { return "OutboxNoSleepClock"; }
  void SleepForMicroseconds(int /*micros*/) override {}
};

class CrashTestEnv : public rocksdb::EnvWrapper {
 public:
  explicit CrashTestEnv(std::unique_ptr<rocksdb::Env> base)
      : EnvWrapper(std::move(base)) {
    // EnvWrapper would hand RocksDB a legacy adapter around itself; give it
    // the real file system so every call keeps its IOOptions and reaches the
    // fault-injecting file system's own methods.
    file_system_ = target()->GetFileSystem();
    system_clock_ = std::make_shared<NoSleepClock>(target()->GetSystemClock());
  }
  const char* Name() const override { return "OutboxCrashTestEnv"; }
  void SleepForMicroseconds(int /*micros*/) override {}
};

}  // namespace

std::unique_ptr<rocksdb::Env> NewCrashTestEnv(
    const std::shared_ptr<rocksdb::FileSystem>& fs) {
  return std::make_unique<CrashTestEnv>(rocksdb::NewCompositeEnv(fs));
}

}  // namespace outbox::testing
