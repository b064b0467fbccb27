// Copyright (c) edge-outbox authors.
//
// The RocksDB options every outbox store is opened with, and why.

#ifndef OUTBOX_LIB_ROCKS_OPTIONS_H_
#define OUTBOX_LIB_ROCKS_OPTIONS_H_

#include <memory>
#include <string>

#include "outbox/options.h"
#include "rocksdb/options.h"

namespace outbox {

// The memory budget a store opens with, shared by all its column families.
struct RocksMemory {
  // Null for Options::MemoryProfile::kDefault (RocksDB's defaults).
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffers;
  std::shared_ptr<rocksdb::Cache> block_cache;
};
RocksMemory MakeRocksMemory(Options::MemoryProfile profile);

rocksdb::DBOptions MakeDbOptions(rocksdb::Env* env,
                                 const RocksMemory& memory = RocksMemory());
// `options` for rocksdb::DB::OpenForReadOnly when the open must leave every
// file of the store as it was: no RocksDB log (LOG) is created or rotated.
rocksdb::DBOptions ReadWithoutWriting(rocksdb::DBOptions options);

// Pins every option that decides whether another RocksDB version can read
// the files (format, checksum, compression; rocks_options.cc says why).
rocksdb::ColumnFamilyOptions MakeFamilyOptions(
    const std::string& family, const RocksMemory& memory = RocksMemory());

}  // namespace outbox

#endif  // OUTBOX_LIB_ROCKS_OPTIONS_H_
