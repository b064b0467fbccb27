// Copyright (c) edge-outbox authors.
//
// What RocksDB did on the calling thread while a function ran, counted by
// its PerfContext: the figures tests assert on instead of time. Only for
// tests that link RocksDB (outbox_internal).

#ifndef OUTBOX_TESTS_TESTING_ROCKS_WORK_H_
#define OUTBOX_TESTS_TESTING_ROCKS_WORK_H_

#include <cstdint>
#include <ostream>

#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"

namespace outbox::testing {

struct RocksWork {
  uint64_t tombstones_skipped = 0;   // internal_delete_skipped_count
  uint64_t keys_skipped = 0;         // internal_key_skipped_count
  uint64_t value_bytes_read = 0;     // by Get and MultiGet
  uint64_t iterator_bytes_read = 0;  // keys and values an iterator decoded
  uint64_t memtable_seeks = 0;       // iterator seeks into memtables
  uint64_t memtable_nexts = 0;       // iterator steps in memtables
  uint64_t block_reads = 0;          // table blocks read from the file
};

inline std::ostream& operator<<(std::ostream& os, const RocksWork& w) {
  return os << "{tombstones skipped " << w.tombstones_skipped
            << ", keys skipped " << w.keys_skipped << ", value bytes "
            << w.value_bytes_read << ", iterator bytes "
            << w.iterator_bytes_read << ", memtable seeks " << w.memtable_seeks
            << ", memtable nexts " << w.memtable_nexts << ", block reads "
            << w.block_reads << "}";
}

// Runs `fn` on this thread and returns what RocksDB counted meanwhile (work
// that `fn` hands to other threads is not counted).
template <typename Fn>
RocksWork CountRocksWork(Fn&& fn) {
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  fn();
  const rocksdb::PerfContext& c = *rocksdb::get_perf_context();
  RocksWork w;
  w.tombstones_skipped = c.internal_delete_skipped_count;
  w.keys_skipped = c.internal_key_skipped_count;
  w.value_bytes_read = c.get_read_bytes + c.multiget_read_bytes;
  w.iterator_bytes_read = c.iter_read_bytes;
  w.memtable_seeks = c.seek_on_memtable_count;
  w.memtable_nexts = c.next_on_memtable_count;
  w.block_reads = c.block_read_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  return w;
}

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_ROCKS_WORK_H_
