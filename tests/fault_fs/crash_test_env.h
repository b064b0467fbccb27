// Copyright (c) edge-outbox authors.
//
// The rocksdb::Env a crash test opens its DB with.

#ifndef OUTBOX_TESTS_FAULT_FS_CRASH_TEST_ENV_H_
#define OUTBOX_TESTS_FAULT_FS_CRASH_TEST_ENV_H_

#include <memory>

#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace outbox::testing {

// rocksdb::NewCompositeEnv(fs), except that sleeping returns at once (both
// Env::SleepForMicroseconds and the SystemClock's). RocksDB sleeps a whole
// second after every failed background flush or compaction before it looks
// again, and DB::Close() waits for that sleep: in a crash loop, where the
// power goes mid-flush in many cycles, that is most of the wall time and
// tests nothing. Time itself (NowMicros) is the real clock.
// Thread-safe, as the Env it wraps. `fs` is shared with the Env.
std::unique_ptr<rocksdb::Env> NewCrashTestEnv(
    const std::shared_ptr<rocksdb::FileSystem>& fs);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_FAULT_FS_CRASH_TEST_ENV_H_
