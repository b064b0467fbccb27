// Copyright (c) edge-outbox authors.

#include "lib/rocks_options.h"

#include "lib/keys.h"
#include "rocksdb/cache.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/table_properties_collectors.h"
#include "rocksdb/write_buffer_manager.h"

namespace outbox {

RocksMemory MakeRocksMemory(Options::MemoryProfile profile) {
  RocksMemory m;
  if (profile == Options::MemoryProfile::kSmall) {
    m.block_cache = rocksdb::NewLRUCache(4 << 20);
    m.write_buffers =
        std::make_shared<rocksdb::WriteBufferManager>(8 << 20, m.block_cache);
  }
  return m;
}

rocksdb::DBOptions MakeDbOptions(rocksdb::Env* env, const RocksMemory& memory) {
  rocksdb::DBOptions o;
  if (memory.write_buffers != nullptr) {
    // One budget for all memtables: when it is reached the largest is
    // flushed, however many tables the caller has.
    o.write_buffer_manager = memory.write_buffers;
    o.max_open_files = 64;
    o.max_background_jobs = 2;
    o.table_cache_numshardbits = 2;
  }
  o.env = env;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  // After a power cut, recover every write whose WAL record is intact and
  // stop at the first torn one. Writes acknowledged with sync=true are all
  // before any torn record, so none is lost; nothing after a hole is
  // replayed, so a batch is never half-applied.
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  // Flush all column families together: a record table and the queue are
  // written by the same batches, and point-in-time recovery needs every
  // family's flushed state to end at the same point of the log.
  o.atomic_flush = true;
  // Recycled WAL files can leave old records that look valid after a crash.
  o.recycle_log_file_num = 0;
  o.paranoid_checks = true;
  // RocksDB opens table files with 16 threads per column family by default:
  // ~100 threads on every open of a store, which costs more than the files
  // it opens on an edge device (and about half of each reopen in the crash
  // soak). One is plenty for a store of this size.
  o.max_file_opening_threads = 1;
  // Edge devices: keep RocksDB's own log small. These caps also matter for
  // correctness on armhf: Debian's 32-bit librocksdb is built without
  // large-file support, so no single file of the store may reach 2 GiB
  // (write buffers and table files stay far below that on their own).
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  o.max_log_file_size = 1 << 20;
  o.keep_log_file_num = 3;
  o.max_manifest_file_size = 4 << 20;
  return o;
}

rocksdb::ColumnFamilyOptions MakeFamilyOptions(const std::string& family,
                                               const RocksMemory& memory) {
  rocksdb::ColumnFamilyOptions o;
  rocksdb::BlockBasedTableOptions table;
  if (memory.block_cache != nullptr) {
    o.write_buffer_size = 2 << 20;
    o.max_write_buffer_number = 2;
    table.block_cache = memory.block_cache;
    table.cache_index_and_filter_blocks = true;
  }
  if (family == keys::kIdempotencyFamily) {
    // Every commit with a key looks it up, and nearly every lookup misses (a
    // new key): a Bloom filter answers most misses without reading a block.
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    o.memtable_prefix_bloom_size_ratio = 0.02;
    o.memtable_whole_key_filtering = true;
  }
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  if (family == keys::kPendingFamily) {
    // The queue deletes from its head all day long. A file whose keys are
    // mostly tombstones is compacted soon, so scans that start below the head
    // bound meet few of them even before a periodic compaction.
    o.table_properties_collector_factories.push_back(
        rocksdb::NewCompactOnDeletionCollectorFactory(
            /*sliding_window_size=*/4096, /*deletion_trigger=*/2048,
            /*deletion_ratio=*/0.5));
  }
  return o;
}

}  // namespace outbox
