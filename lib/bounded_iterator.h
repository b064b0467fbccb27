// Copyright (c) edge-outbox authors.
//
// BoundedIterator: a RocksDB iterator over the keys [lower, upper) of one
// column family. Every scan of the store goes through it, so none walks past
// its range: below `lower` lie the tombstones a FIFO queue leaves at its
// head, above `upper` nothing worth probing for. RocksDB's bounds point at
// Slices that must outlive the iterator; this class keeps them together.

#ifndef OUTBOX_LIB_BOUNDED_ITERATOR_H_
#define OUTBOX_LIB_BOUNDED_ITERATOR_H_

#include <memory>
#include <string>
#include <utility>

#include "rocksdb/db.h"

namespace outbox {

// REQUIRES: External synchronization; `db` and `family` outlive it.
class BoundedIterator {
 public:
  // Positioned at the first key >= lower. `fill_cache` = false for a
  // one-pass read that should not evict hot blocks.
  BoundedIterator(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family,
                  std::string lower, std::string upper, bool fill_cache = true)
      : lower_(std::move(lower)),
        upper_(std::move(upper)),
        lower_slice_(lower_),
        upper_slice_(upper_) {
    rocksdb::ReadOptions ro;
    ro.iterate_lower_bound = &lower_slice_;
    ro.iterate_upper_bound = &upper_slice_;
    ro.fill_cache = fill_cache;
    it_.reset(db->NewIterator(ro, family));
    it_->Seek(lower_slice_);
  }
  BoundedIterator(const BoundedIterator&) = delete;
  BoundedIterator& operator=(const BoundedIterator&) = delete;

  rocksdb::Iterator* operator->() const { return it_.get(); }

 private:
  const std::string lower_, upper_;
  const rocksdb::Slice lower_slice_, upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

}  // namespace outbox

#endif  // OUTBOX_LIB_BOUNDED_ITERATOR_H_
