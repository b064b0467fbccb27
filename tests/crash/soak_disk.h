// Copyright (c) edge-outbox authors.
//
// DiskState: what a store's directory holds after a power cut, read straight
// through RocksDB (a read-only open, no outbox code in between) before the
// store opens. The store's own open recounts pending_count and pending_bytes
// from the entries (store_open.cc), so its figures cannot disagree with a
// listing; what was persisted can.

#ifndef OUTBOX_TESTS_CRASH_SOAK_DISK_H_
#define OUTBOX_TESTS_CRASH_SOAK_DISK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "proto/storage.pb.h"
#include "rocksdb/env.h"

namespace outbox::testing {

struct DiskState {
  struct Pending {
    uint64_t seq = 0;
    uint64_t bytes = 0;  // the stored value's size
    std::string id;      // empty if the value does not decode
  };
  // The QueueState as persisted in outbox.meta (all zero if never written).
  storage::QueueState queue;
  // Every entry of outbox.pending, from key zero: none is hidden by the
  // persisted head, as the store's bounded reads would hide it.
  std::vector<Pending> pending;
  std::vector<std::string> dead;         // the keys (event ids) of outbox.dead
  absl::flat_hash_set<std::string> ids;  // pending and dead event ids

  // Whether `id` is stored, pending or dead.
  bool Holds(const std::string& id) const { return ids.contains(id); }
};

// Reads the store at `path` through `env` (borrowed), with the RocksDB
// options the store itself opens with. REQUIRES: the store is closed.
absl::StatusOr<DiskState> ReadDiskState(rocksdb::Env* env,
                                        const std::string& path);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_DISK_H_
