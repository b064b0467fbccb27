// Copyright (c) edge-outbox authors.
//
// The one converter from rocksdb::Status to absl::Status.

#ifndef OUTBOX_LIB_ROCKS_STATUS_H_
#define OUTBOX_LIB_ROCKS_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "rocksdb/status.h"

namespace outbox {

// Maps a RocksDB status to the absl code that tells the caller what to do
// next, and prefixes `context` (what we were doing) to RocksDB's message:
//   NoSpace                      -> kResourceExhausted (free disk space)
//   Corruption                   -> kDataLoss
//   Busy, TryAgain, TimedOut,
//   Incomplete, other IOError    -> kUnavailable (retry the call)
//   lock held by another process -> kUnavailable, says who to look for
//   NotFound, PathNotFound       -> kNotFound
//   InvalidArgument              -> kInvalidArgument
//   NotSupported                 -> kUnimplemented
//   Aborted                      -> kAborted
//   ShutdownInProgress           -> kCancelled
absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context);

}  // namespace outbox

#endif  // OUTBOX_LIB_ROCKS_STATUS_H_
