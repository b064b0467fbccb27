// Copyright (c) edge-outbox authors.
//
// BatchGroup: the writes of several writers concatenated into one
// rocksdb::WriteBatch, for group commit (store_impl.cc). RocksDB's own
// WriteBatchInternal::Append is not public; its batch format is: an 8-byte
// sequence number and a 4-byte little-endian count, then the records
// (rocksdb/write_batch.h, WriteBatch(const std::string& rep)). Joining
// batches is joining their records and adding their counts; the sequence
// number is assigned by the DB at write time.
//
// REQUIRES: External synchronization.

#ifndef OUTBOX_LIB_BATCH_GROUP_H_
#define OUTBOX_LIB_BATCH_GROUP_H_

#include <cstdint>
#include <string>

#include "rocksdb/write_batch.h"

namespace outbox {

class BatchGroup {
 public:
  BatchGroup() { Clear(); }

  // Appends every record of `batch`, after those added before.
  void Add(const rocksdb::WriteBatch& batch);

  // The records added so far, in order, as one batch; the group is empty
  // again afterwards.
  rocksdb::WriteBatch Take();

  void Clear();
  uint32_t count() const { return count_; }

 private:
  std::string rep_;
  uint32_t count_ = 0;
};

}  // namespace outbox

#endif  // OUTBOX_LIB_BATCH_GROUP_H_
