// Copyright (c) edge-outbox authors.

#include "lib/rocks_options.h"

#include <cstdarg>

#include "lib/keys.h"
#include "rocksdb/cache.h"
#include "rocksdb/comparator.h"
#include "rocksdb/env.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/table_properties_collectors.h"
#include "rocksdb/write_buffer_manager.h"

namespace outbox {
namespace {

// RocksDB's own log, thrown away: for an open that must not write a byte
// into the store's directory. (7.8's read-only mode creates no LOG when it
// is given none; a logger is given anyway, so that no version's default can
// create or rotate one. future_store_test compares every file.)
class DiscardLogger final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

// What decides whether another RocksDB can read the table files this one
// writes (the wiki's "Compatibility Between Different Releases"). Each is
// pinned, not left to the library's default: a RocksDB upgrade in a new
// firmware image must not start writing files that the RocksDB in the other
// slot (the rollback target) cannot read. The oldest RocksDB a slot may carry
// is 7.8 (Debian 12's, this project's floor since its first commit); each
// value below is what 7.8 writes by default, so stores written so far are
// already in this format, and each is readable by RocksDB 6.27 and later.
void PinTableFormat(rocksdb::BlockBasedTableOptions* table) {
  // Format 5 (full filters, the faster Bloom) is readable since RocksDB
  // 6.6; it is also 7.8's default, so existing stores change nothing.
  // Format 6 is unreadable before 8.6.
  table->format_version = 5;
  // XXH3, 7.8's default: readable since 6.27, and fast without the CRC32
  // instructions that armhf boards lack. (Going further back would mean
  // kCRC32c, readable by every RocksDB; the footer names each file's
  // checksum, so such a change needs no migration.)
  table->checksum = rocksdb::kXXH3;
  // Binary-search index and data blocks, the defaults: the hash and
  // partitioned variants need newer readers.
  table->index_type = rocksdb::BlockBasedTableOptions::kBinarySearch;
  table->data_block_index_type =
      rocksdb::BlockBasedTableOptions::kDataBlockBinarySearch;
  // Filters (the Bloom filter of outbox.idem) never decide readability: a
  // reader that does not know a filter ignores it and reads the blocks.
}

// The compression every level of every family uses, pinned to what stores
// have used since the first release (7.8's default, as Debian builds it).
// Every Debian RocksDB since 5.x links Snappy; a reader without it cannot
// read Snappy blocks, so a build for a RocksDB without Snappy must keep the
// same setting and link it. No per-level or bottommost variant, no
// dictionary (both need readers that support them), no blob files.
void PinCompression(rocksdb::ColumnFamilyOptions* o) {
  o->compression = rocksdb::kSnappyCompression;
  o->compression_per_level.clear();
  o->bottommost_compression = rocksdb::kDisableCompressionOption;
  o->compression_opts.max_dict_bytes = 0;
  o->enable_blob_files = false;
  // Keys sort bytewise (keys.h depends on it); the comparator's name is
  // recorded in RocksDB's MANIFEST and must match on every open.
  o->comparator = rocksdb::BytewiseComparator();
}

}  // namespace

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
  // Recycled WAL files can leave old records that look valid after a crash
  // (and their record format needs a reader that knows it).
  o.recycle_log_file_num = 0;
  // The log is read by whichever RocksDB opens the store next: no WAL
  // compression (unreadable before 7.x), and no WAL tracking records in
  // RocksDB's MANIFEST (a reader before 6.17 does not know them).
  o.wal_compression = rocksdb::kNoCompression;
  o.track_and_verify_wals_in_manifest = false;
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

rocksdb::DBOptions ReadWithoutWriting(rocksdb::DBOptions options) {
  options.info_log = std::make_shared<DiscardLogger>();
  options.create_if_missing = false;
  options.create_missing_column_families = false;
  return options;
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
  PinTableFormat(&table);
  PinCompression(&o);
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
