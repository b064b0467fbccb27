// Copyright (c) edge-outbox authors.
//
// Conversions between rocksdb::Slice and absl::string_view. Debian's Abseil
// has its own string_view type, so the two do not convert implicitly.

#ifndef OUTBOX_LIB_SLICES_H_
#define OUTBOX_LIB_SLICES_H_

#include "absl/strings/string_view.h"
#include "rocksdb/slice.h"

namespace outbox {

inline absl::string_view View(const rocksdb::Slice& s) {
  return absl::string_view(s.data(), s.size());
}

inline rocksdb::Slice ToSlice(absl::string_view s) {
  return rocksdb::Slice(s.data(), s.size());
}

}  // namespace outbox

#endif  // OUTBOX_LIB_SLICES_H_
