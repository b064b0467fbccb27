// Copyright (c) edge-outbox authors.
//
// Store::Commit: lock, check, write, index. What the batch holds is built by
// BuildCommitBatch (commit_batch.cc) without I/O.

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/codec.h"
#include "lib/commit_batch.h"
#include "lib/crash_points.h"
#include "lib/keys.h"
#include "lib/rocks_status.h"
#include "lib/store_impl.h"

namespace outbox {

absl::StatusOr<CommitResult> StoreImpl::Commit(const Txn& txn) {
  // The monotonic clock: a wall clock set meanwhile must not make a commit
  // look hours long (or negative).
  const absl::Duration started = clock_->Monotonic();
  absl::StatusOr<CommitResult> result = CommitUntimed(txn);
  if (result.ok()) commit_latency_.Record(clock_->Monotonic() - started);
  return result;
}

absl::StatusOr<CommitResult> StoreImpl::CommitUntimed(const Txn& txn) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  OUTBOX_RETURN_IF_ERROR(ValidateTxn(txn));
  const std::string& key = txn.idempotency_key();
  // While this commit holds its key, no other commit with the same key gets
  // past here: a first commit still in the writer queue is not in the store
  // yet, and the lookup below would miss it. Holding the key lets that
  // lookup run without the store's lock, which other committers need.
  KeyHold hold(this, key);
  const absl::Time now = Now();
  OUTBOX_ASSIGN_OR_RETURN(const IdempotencyLookup prior,
                          LookUpIdempotencyKey(txn));
  if (prior.answer.has_value()) return *prior.answer;
  CommitResult result;
  {
    absl::MutexLock l(&mu_);
    // The broken split variant writes its records past the writer queue,
    // holding mu_ from here: no other commit may build on the same tail (and
    // take the same seqs), nor write beside it.
    while (variant_->SplitsCommits() && !writers_.empty()) {
      serial_cv_.Wait(&mu_);
    }
    // A cancel reads a workflow's state, which the agent's settlements
    // change: it must not interleave with one (see Settlement's comment).
    std::optional<SerialWrite> serial;
    if (!txn.cancels().empty()) serial.emplace(this);
    // A store recovering from a full disk reopens here, which replaces the
    // column family handles the batch is built with.
    OUTBOX_RETURN_IF_ERROR(WritableLocked());
    CommitContext context{now,
                          tail_,
                          &options_,
                          pending_,
                          idem_,
                          &tables_,
                          prior.expired_committed_ms,
                          variant_->SplitsCommits(),
                          clock_mark_ms_.load(),
                          store_clock_.NowMs()};
    OUTBOX_ASSIGN_OR_RETURN(CommitBatch commit, BuildCommitBatch(txn, context));
    bool waited = false;
    OUTBOX_ASSIGN_OR_RETURN(
        const std::vector<uint64_t> victims,
        MakeClassRoomLocked(commit.events, &serial, &waited));
    if (!victims.empty() || waited) {
      // The room is made in a write of its own, before the commit's: a power
      // cut between the two leaves the evicted events given up as their
      // class allows and the commit not made (its caller never saw OK).
      // Either way the queue moved meanwhile: build on where it is now.
      OUTBOX_RETURN_IF_ERROR(BuryLocked(victims, Burial{}));
      context.before = tail_;
      OUTBOX_ASSIGN_OR_RETURN(commit, BuildCommitBatch(txn, context));
    }
    if (!txn.cancels().empty()) {
      OUTBOX_RETURN_IF_ERROR(AddCancelsLocked(txn, now, &commit));
    }
    OUTBOX_RETURN_IF_ERROR(WriteCommitLocked(&commit, now));
    result.event_ids = std::move(commit.event_ids);
    result.response = txn.response();
  }
  if (!txn.events().empty() || !txn.cancels().empty()) Wake();
  return result;
}

StoreImpl::KeyHold::KeyHold(StoreImpl* store, const std::string& key)
    : store_(store), key_(key) {
  if (key_.empty()) return;
  absl::MutexLock l(&store_->mu_);
  while (store_->keys_in_flight_.contains(key_)) {
    store_->keys_cv_.Wait(&store_->mu_);
  }
  store_->keys_in_flight_.insert(key_);
}

StoreImpl::KeyHold::~KeyHold() {
  if (key_.empty()) return;
  absl::MutexLock l(&store_->mu_);
  store_->keys_in_flight_.erase(key_);
  store_->keys_cv_.SignalAll();
}

absl::StatusOr<StoreImpl::IdempotencyLookup> StoreImpl::LookUpIdempotencyKey(
    const Txn& txn) {
  IdempotencyLookup lookup;
  if (txn.idempotency_key().empty()) return lookup;
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), idem_,
               keys::IdempotencyRecordKey(txn.idempotency_key()), &value);
  if (s.IsNotFound()) return lookup;
  if (!s.ok()) return FromRocks(s, "reading the idempotency key");
  storage::IdempotencyRecord record;
  OUTBOX_RETURN_IF_ERROR(DecodeStored(keys::kIdempotencyFamily,
                                      "an idempotency key", value, &record));
  // On the store clock, never the wall clock: a clock set ahead
  // must not make a retry a second sale, nor one set back at the first
  // commit make its key look years old once the clock is right.
  if (absl::Milliseconds(store_clock_.NowMs() -
                         CommittedStoreClockMs(record)) >=
      options_.idempotency_window) {
    // Expired: this commit replaces it (and its expiry index entry).
    lookup.expired_committed_ms = record.committed_unix_ms();
    return lookup;
  }
  CommitResult& answer = lookup.answer.emplace();
  answer.duplicate = true;
  answer.event_ids.assign(record.event_ids().begin(), record.event_ids().end());
  answer.response = record.response();
  return lookup;
}

absl::Status StoreImpl::WriteCommitLocked(CommitBatch* commit,
                                          absl::Time built) {
  const bool sync = variant_->CommitSyncs(options_.sync);
  internal::CrashPoint(internal::kCommitBeforeWrite);
  if (commit->records.Count() > 0) {
    // The broken split variant: records in a batch of their own, first,
    // written straight under mu_ with the writer queue empty (see Commit).
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    const absl::Status s =
        FromRocks(db_->Write(wo, &commit->records), "commit (records)");
    if (!s.ok()) {
      write_error_ = s;  // as WriteGroupLocked: refuse writes until reopened
      return s;
    }
    internal::CrashPoint(internal::kCommitBetweenSplitBatches);
  }
  // Indexed only once durable, so the agent never sends an event that a
  // power cut could still take back. Meanwhile the class limits count them
  // as queued.
  QueueClassAddsLocked(commit->events, +1);
  const absl::Status written = WriteLocked(
      commit->batch, commit->after, "commit", sync, [this, commit, built] {
        QueueClassAddsLocked(commit->events, -1);
        const int64_t built_ms = ToStoredMillis(built);
        for (const CommittedEvent& e : commit->events) {
          index_.Add(e.seq, e.ordering_key,
                     index_.LaneOf(e.destination, e.type),
                     IndexDue(e.due_ms, built_ms), e.bytes, IndexNow());
        }
        for (const std::string& id : commit->cancelled) UntargetIdLocked(id);
        cancel_count_.fetch_add(commit->cancelled.size());
      });
  if (!written.ok()) {
    QueueClassAddsLocked(commit->events, -1);
    return written;
  }
  internal::CrashPoint(internal::kCommitAfterWrite);
  return absl::OkStatus();
}

}  // namespace outbox
