// Copyright (c) edge-outbox authors.
//
// What a store's directory holds before it is opened, and making a directory
// ready for a new store: the check and the action, apart.

#ifndef OUTBOX_LIB_STORE_PATH_H_
#define OUTBOX_LIB_STORE_PATH_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rocksdb/env.h"

namespace outbox {

struct StorePath {
  enum class Kind {
    kAbsent,             // missing, or an empty directory
    kInterruptedCreate,  // only what a cut-off first Store::Open leaves
    kDatabase,           // a RocksDB database (CURRENT exists)
  };
  Kind kind = Kind::kAbsent;
  // The directory's entries (without "." and ".."); kInterruptedCreate only.
  std::vector<std::string> leftovers;
};

// The entries of the directory `path` (without "." and ".."), through
// `env`; none if `path` does not exist. Errors: kFailedPrecondition (not a
// directory), or the error listing it.
absl::StatusOr<std::vector<std::string>> ListDirectory(rocksdb::Env* env,
                                                       const std::string& path);

// Looks at `path` without changing anything. A cut-off first open is
// recognised by its files: IDENTITY, LOCK, LOG*, MANIFEST-*, OPTIONS-*,
// *.dbtmp and empty *.log files, and nothing else; such a directory never
// held a commit.
// Errors: kFailedPrecondition (`path` is not a directory, or a non-empty
// directory without a database), or the error listing it.
absl::StatusOr<StorePath> InspectStorePath(rocksdb::Env* env,
                                           const std::string& path);

// Makes `path` (kAbsent or kInterruptedCreate) ready for RocksDB to create a
// store in: deletes the leftovers of an interrupted create (RocksDB will not
// create a database over an old log file), except LOCK, which is how a
// concurrent creator would be noticed, and creates the missing parents
// (RocksDB creates the store's own directory only).
absl::Status PrepareNewStorePath(rocksdb::Env* env, const std::string& path,
                                 const StorePath& found);

}  // namespace outbox

#endif  // OUTBOX_LIB_STORE_PATH_H_
