// Copyright (c) edge-outbox authors.
//
// The on-disk format a store is written in, read back from the OPTIONS file
// RocksDB keeps beside it: every column family has the pinned table format,
// checksum and compression (rocks_options.cc says why each), so that a
// RocksDB upgrade cannot change them unnoticed.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "outbox/store.h"
#include "rocksdb/convenience.h"
#include "rocksdb/env.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/options_util.h"
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

}  // namespace
}  // namespace outbox
