// Copyright (c) edge-outbox authors.
//
// What one Store::Commit writes, computed without any I/O: from the Txn, the
// queue state before it and the time, the WriteBatch (records, pending
// entries, idempotency record) and the queue state after it. Store::Commit
// (store_commit.cc) does the locking, the idempotency lookup, the write and
// the indexing around it.

#ifndef OUTBOX_LIB_COMMIT_BATCH_H_
#define OUTBOX_LIB_COMMIT_BATCH_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "outbox/options.h"
#include "outbox/txn.h"
#include "proto/storage.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace outbox {

// The checks that need nothing but the Txn: not empty, idempotency key size,
// every event has a type and an id. Errors: kInvalidArgument.
absl::Status ValidateTxn(const Txn& txn);

// What BuildCommitBatch needs besides the Txn. Handles are borrowed.
struct CommitContext {
  absl::Time now;
  storage::QueueState before;  // the queue state the commit applies to
  const Options* options;      // capacity limits
  rocksdb::ColumnFamilyHandle* pending;
  rocksdb::ColumnFamilyHandle* idempotency;
  // The store's record tables by name.
  const absl::flat_hash_map<std::string, rocksdb::ColumnFamilyHandle*>* tables;
  // Set when the Txn's idempotency key has a stored record that expired: the
  // time its expiry index entry is keyed by, which the commit deletes.
  std::optional<int64_t> expired_key_committed_ms;
  // Test-only broken variant (StoreVariant::SplitsCommits): the
  // records go to CommitBatch::records instead of the one batch.
  bool records_apart = false;
  // The store's wall-clock mark (Store::WallClockMark, Unix ms; 0: none): a
  // `now` more than a minute behind it is known wrong, and the entries say
  // so (OutboxEntry.created_clock_behind).
  int64_t clock_mark_ms = 0;
  // The store clock's time now (lib/store_clock.h, Unix ms): an idempotency
  // record's window runs from it (its expiry index entry is keyed by `now`).
  int64_t store_clock_ms = 0;
};

// One committed event, as the queue index needs it.
struct CommittedEvent {
  uint64_t seq;
  absl::string_view ordering_key;  // borrows from the Txn
  absl::string_view type;
  absl::string_view destination;
  int64_t due_ms;  // stored next-attempt time (Unix ms)
  uint32_t bytes;  // the stored entry's size
};

struct CommitBatch {
  // Everything the commit writes but the queue state, which the write path
  // adds (store_impl.cc), so that the counters travel with the change.
  rocksdb::WriteBatch batch;
  // The records, when CommitContext::records_apart; else empty.
  rocksdb::WriteBatch records;
  storage::QueueState after;
  std::vector<CommittedEvent> events;  // in seq order
  // Completed workflows a cancel queues again (store_workflow.cc): their
  // CommittedEvents borrow from here.
  std::deque<storage::OutboxEntry> requeued;
  std::vector<std::string> event_ids;  // in Emit order
  // The events whose workflow cancel this commit records, to put back in
  // their untargeted lanes once it is durable (Store::Relane).
  std::vector<std::string> cancelled;
};

// Builds the commit of `txn`. REQUIRES: ValidateTxn(txn) is OK.
// Errors (nothing is built): kInvalidArgument (unknown table, empty record
// key), kResourceExhausted (the queue would pass Options' limits).
absl::StatusOr<CommitBatch> BuildCommitBatch(const Txn& txn,
                                             const CommitContext& context);

}  // namespace outbox

#endif  // OUTBOX_LIB_COMMIT_BATCH_H_
