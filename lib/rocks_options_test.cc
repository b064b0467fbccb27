// Copyright (c) edge-outbox authors.
//
// The on-disk format a store is written in, read back from the OPTIONS file
// RocksDB keeps beside it: every column family has the pinned table format,
// checksum and compression (rocks_options.cc says why each), so that a
// RocksDB upgrade cannot change them unnoticed. And the bounds the small
// memory profile puts on RocksDB's memory.

#include "lib/rocks_options.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "outbox/store.h"
#include "rocksdb/convenience.h"
#include "rocksdb/env.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/options_util.h"
#include "rocksdb/write_buffer_manager.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

TEST(RocksOptionsTest, EveryFamilyIsWrittenInThePinnedFormat) {
  testing::TempDir dir;
  Options options;
  options.tables = {"sales"};
  auto store = Store::Open(options, dir.Sub("db"));
  ASSERT_OUTBOX_OK(store);
  ASSERT_OUTBOX_OK((*store)->Close());
  rocksdb::DBOptions db_options;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  rocksdb::ConfigOptions config;
  config.env = rocksdb::Env::Default();
  ASSERT_TRUE(
      rocksdb::LoadLatestOptions(config, dir.Sub("db"), &db_options, &families)
          .ok());
  EXPECT_EQ(db_options.wal_compression, rocksdb::kNoCompression);
  EXPECT_EQ(db_options.recycle_log_file_num, 0u);
  ASSERT_EQ(families.size(), 7u);  // default, 5 of the store's, "sales"
  for (const rocksdb::ColumnFamilyDescriptor& f : families) {
    SCOPED_TRACE(f.name);
    EXPECT_EQ(f.options.compression, rocksdb::kSnappyCompression);
    EXPECT_TRUE(f.options.compression_per_level.empty());
    EXPECT_EQ(f.options.bottommost_compression,
              rocksdb::kDisableCompressionOption);
    EXPECT_FALSE(f.options.enable_blob_files);
    EXPECT_STREQ(f.options.comparator->Name(), "leveldb.BytewiseComparator");
    const auto* table =
        f.options.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->format_version, 5u);
    EXPECT_EQ(table->checksum, rocksdb::kXXH3);
    EXPECT_EQ(table->index_type,
              rocksdb::BlockBasedTableOptions::kBinarySearch);
  }
}

// memory_profile "small" (docs/configuration.md) is what keeps a store with
// 100,000 pending within the ARM board's budget (VmHWM at most 24 MiB in a
// 256 MiB guest, measured by ArmBoardMemory.PendingBacklogs, a benchmark):
// every table's blocks in one 4 MiB cache, every memtable within 8 MiB
// charged to that cache, and few open files and background jobs.
TEST(RocksOptionsTest, TheSmallProfileBoundsRocksDbsMemory) {
  const RocksMemory small = MakeRocksMemory(Options::MemoryProfile::kSmall);
  ASSERT_NE(small.block_cache, nullptr);
  ASSERT_NE(small.write_buffers, nullptr);
  EXPECT_LE(small.block_cache->GetCapacity(), size_t{4} << 20);
  EXPECT_LE(small.write_buffers->buffer_size(), size_t{8} << 20);
  EXPECT_TRUE(small.write_buffers->cost_to_cache());

  const rocksdb::DBOptions db = MakeDbOptions(rocksdb::Env::Default(), small);
  EXPECT_EQ(db.write_buffer_manager, small.write_buffers);
  EXPECT_LE(db.max_open_files, 64);
  EXPECT_LE(db.max_background_jobs, 2);
  for (const std::string family : {"queue", "sales"}) {
    SCOPED_TRACE(family);
    const rocksdb::ColumnFamilyOptions cf = MakeFamilyOptions(family, small);
    const auto* table =
        cf.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->block_cache, small.block_cache);
    EXPECT_TRUE(table->cache_index_and_filter_blocks);
  }

  // The default profile leaves RocksDB's own defaults.
  const RocksMemory standard =
      MakeRocksMemory(Options::MemoryProfile::kDefault);
  EXPECT_EQ(standard.block_cache, nullptr);
  EXPECT_EQ(standard.write_buffers, nullptr);
}

}  // namespace
}  // namespace outbox
