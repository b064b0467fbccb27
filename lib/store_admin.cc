// Copyright (c) edge-outbox authors.
//
// The operator's side of StoreImpl: listing, finding, purging, figures.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/bounded_iterator.h"
#include "lib/codec.h"
#include "lib/crash_points.h"
#include "lib/keys.h"
#include "lib/queue_state.h"
#include "lib/rocks_status.h"
#include "lib/slices.h"
#include "lib/store_impl.h"
#include "lib/store_path.h"

namespace outbox {
namespace {

// The queue state after `purged` dead letters were deleted: fewer of them,
// and every deletion counted, so that none is silent.
storage::QueueState AfterPurge(storage::QueueState state, size_t purged) {
  state.set_dead_count(queue_state::SaturatingSub(state.dead_count(), purged));
  state.set_dead_purged_total(state.dead_purged_total() + purged);
  return state;
}

}  // namespace

absl::StatusOr<DeadLetter> StoreImpl::DecodeDeadLetter(
    absl::string_view key, absl::string_view value) {
  storage::DeadLetter dead;
  OUTBOX_RETURN_IF_ERROR(DecodeStored(keys::kDeadFamily, key, value, &dead));
  DeadLetter out;
  out.event = ToPendingEvent(dead.entry());
  out.reason = dead.reason();
  out.dead_at = FromStoredMillis(dead.dead_unix_ms());
  out.dead_for = absl::Milliseconds(
      std::max<int64_t>(store_clock_.NowMs() - DeadStoreClockMs(dead), 0));
  out.undecodable = IsUndecodable(dead);
  if (out.undecodable) out.undecodable_value = dead.undecodable_value();
  return out;
}

absl::StatusOr<std::vector<PendingEvent>> StoreImpl::ListPending(size_t limit) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  std::vector<PendingEvent> out;
  if (limit == 0) return out;
  OUTBOX_RETURN_IF_ERROR(ScanPending(
      [&](PendingEvent e) {
        out.push_back(std::move(e));
        return out.size() < limit;
      },
      limit));
  return out;
}

absl::StatusOr<PendingEvent> StoreImpl::FindPending(absl::string_view id) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  std::optional<PendingEvent> found;
  OUTBOX_RETURN_IF_ERROR(ScanPending([&](PendingEvent e) {
    if (e.id != id) return true;
    found = std::move(e);
    return false;
  }));
  if (!found.has_value()) {
    return absl::NotFoundError(absl::StrCat("no pending event with id ", id));
  }
  return *std::move(found);
}

absl::StatusOr<std::vector<DeadLetter>> StoreImpl::ListDeadLetters(
    size_t limit) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  std::vector<DeadLetter> out;
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), dead_));
  for (it->SeekToFirst(); it->Valid() && out.size() < limit; it->Next()) {
    absl::StatusOr<DeadLetter> dead =
        DecodeDeadLetter(View(it->key()), View(it->value()));
    if (!dead.ok()) {
      // A damaged dead letter must not hide the others: list it by its key,
      // with the decoding error as its reason.
      DeadLetter damaged;
      damaged.event.id = it->key().ToString();
      damaged.reason = std::string(dead.status().message());
      damaged.undecodable = true;
      damaged.undecodable_value = it->value().ToString();
      out.push_back(std::move(damaged));
      continue;
    }
    out.push_back(*std::move(dead));
  }
  OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "listing dead letters"));
  return out;
}

absl::StatusOr<DeadLetter> StoreImpl::FindDeadLetter(absl::string_view id) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  std::string value;
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), dead_, ToSlice(id), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("no dead letter with id ", id));
  }
  if (!s.ok()) return FromRocks(s, "reading a dead letter");
  return DecodeDeadLetter(id, value);
}

absl::StatusOr<size_t> StoreImpl::PurgeExpiredIdempotencyKeys() {
  absl::MutexLock l(&mu_);
  SerialWrite serial(this);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  const int64_t window_ms =
      absl::ToInt64Milliseconds(options_.idempotency_window);
  // The expiry index is keyed by the wall clock's commit time (what builds
  // before the store clock read): scan only its part old by the wall clock,
  // and of that forget only the keys old by the store clock too. A wall
  // clock set ahead reaches every key and forgets none early; a key
  // committed under a clock set back is reached early and kept its window.
  const int64_t store_cutoff_ms = store_clock_.NowMs() - window_ms;
  BoundedIterator it(
      db_.get(), idem_, keys::kIdempotencyExpiryPrefix,
      keys::IdempotencyExpiryKey(ToStoredMillis(Now()) - window_ms + 1, ""));
  rocksdb::WriteBatch batch;
  size_t purged = 0;
  for (; it->Valid(); it->Next()) {
    std::optional<keys::ExpiryKey> expiry =
        keys::ParseIdempotencyExpiryKey(View(it->key()));
    OUTBOX_ASSIGN_OR_RETURN(const bool forget,
                            KeyExpiredLocked(expiry, store_cutoff_ms));
    if (!forget) continue;  // young on the store clock: kept
    rocksdb::Status s = batch.Delete(idem_, it->key());
    if (s.ok() && expiry.has_value()) {
      s = batch.Delete(idem_,
                       keys::IdempotencyRecordKey(expiry->idempotency_key));
    }
    if (!s.ok()) return FromRocks(s, "purging idempotency keys");
    ++purged;
  }
  OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "purging idempotency keys"));
  if (purged == 0) return purged;
  internal::CrashPoint(internal::kPurgeBeforeWrite);
  OUTBOX_RETURN_IF_ERROR(
      WriteLocked(batch, tail_, "purging idempotency keys", options_.sync));
  return purged;
}

absl::StatusOr<bool> StoreImpl::KeyExpiredLocked(
    const std::optional<keys::ExpiryKey>& expiry, int64_t store_cutoff_ms) {
  if (!expiry.has_value()) return true;  // a malformed index entry: dropped
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), idem_,
               keys::IdempotencyRecordKey(expiry->idempotency_key), &value);
  if (s.IsNotFound()) return true;  // an index entry left behind
  if (!s.ok()) return FromRocks(s, "reading an idempotency key");
  storage::IdempotencyRecord record;
  // An undecodable record is kept for an operator to look at (verify).
  if (!record.ParseFromString(value)) return false;
  return CommittedStoreClockMs(record) < store_cutoff_ms;
}

absl::StatusOr<size_t> StoreImpl::PurgeDeadLetters(absl::Duration older_than) {
  if (older_than < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a dead-letter purge needs an age >= 0, not ",
                     absl::FormatDuration(older_than)));
  }
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::MutexLock l(&mu_);
  SerialWrite serial(this);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  // On the store clock, never the wall clock: one set 40 days ahead would
  // make minutes-old dead letters look older than their retention.
  const int64_t cutoff_ms =
      store_clock_.NowMs() - absl::ToInt64Milliseconds(older_than);
  // One pass over a snapshot (the iterator's), written in bounded batches
  // as it goes: a day's dead letters are never one huge write, and a power
  // cut between two batches leaves the first deleted and counted.
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), dead_));
  rocksdb::WriteBatch batch;
  size_t in_batch = 0;
  size_t purged = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    storage::DeadLetter dead;
    // Undecodable dead letters are kept, whatever their age: a quarantined
    // value is the only copy of damaged bytes, and one whose own value does
    // not decode is corruption to look at. PurgeDeadLetter(id) deletes them.
    if (!DecodeStored(keys::kDeadFamily, View(it->key()), View(it->value()),
                      &dead)
             .ok() ||
        IsUndecodable(dead) || DeadStoreClockMs(dead) >= cutoff_ms) {
      continue;
    }
    rocksdb::Status s = batch.Delete(dead_, it->key());
    if (!s.ok()) return FromRocks(s, "purging dead letters");
    if (++in_batch == kPurgeBatch) {
      OUTBOX_RETURN_IF_ERROR(WritePurgeLocked(&batch, &in_batch));
      purged += kPurgeBatch;
    }
  }
  OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "purging dead letters"));
  purged += in_batch;
  OUTBOX_RETURN_IF_ERROR(WritePurgeLocked(&batch, &in_batch));
  return purged;
}

absl::Status StoreImpl::WritePurgeLocked(rocksdb::WriteBatch* batch,
                                         size_t* deleted) {
  if (*deleted == 0) return absl::OkStatus();
  internal::CrashPoint(internal::kPurgeBeforeWrite);
  OUTBOX_RETURN_IF_ERROR(WriteLocked(*batch, AfterPurge(tail_, *deleted),
                                     "purging dead letters", options_.sync));
  batch->Clear();
  *deleted = 0;
  return absl::OkStatus();
}

absl::Status StoreImpl::PurgeDeadLetter(absl::string_view id) {
  absl::MutexLock l(&mu_);
  SerialWrite serial(this);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  // Existence only: a dead letter whose value does not decode is deleted too.
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), dead_, ToSlice(id), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("no dead letter with id ", id));
  }
  if (!s.ok()) return FromRocks(s, "reading a dead letter");
  rocksdb::WriteBatch batch;
  s = batch.Delete(dead_, ToSlice(id));
  if (!s.ok()) return FromRocks(s, "purging a dead letter");
  internal::CrashPoint(internal::kPurgeBeforeWrite);
  return WriteLocked(batch, AfterPurge(tail_, 1), "purging a dead letter",
                     options_.sync);
}

absl::StatusOr<size_t> StoreImpl::TEST_ScanFromZero(size_t limit) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), pending_));
  size_t found = 0;
  for (it->SeekToFirst(); it->Valid() && found < limit; it->Next()) ++found;
  OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "scanning from zero"));
  return found;
}

absl::StatusOr<std::vector<LanePending>> StoreImpl::PendingByLane() {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  std::vector<LanePending> lanes;
  absl::MutexLock l(&mu_);
  for (uint32_t id = 0; id < index_.lane_count(); ++id) {
    if (index_.pending(id) == 0) continue;
    const QueueIndex::LaneInfo& info = index_.lane(id);
    lanes.push_back(
        {info.destination, info.type, info.target, index_.pending(id)});
  }
  return lanes;
}

absl::StatusOr<Stats> StoreImpl::GetStats() {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  Stats stats;
  {
    absl::MutexLock l(&mu_);
    stats.pending_events = state_.pending_count();
    stats.pending_bytes = state_.pending_bytes();
    stats.dead_letters = state_.dead_count();
    stats.delivered_total = state_.delivered_total();
    stats.dead_letters_purged = state_.dead_purged_total();
    stats.workflows_needing_attention = state_.workflows_needing_attention();
    stats.evicted_total = state_.evicted_total();
    stats.evicted_deleted_total = state_.evicted_deleted_total();
    stats.expired_total = state_.expired_total();
    for (uint16_t cls = 1; cls < classes_.size(); ++cls) {
      const QueueIndex::ClassTally& t = index_.tally(cls);
      stats.classes.push_back({classes_.Get(cls)->name,
                               classes_.Get(cls)->priority, t.count, t.bytes});
    }
  }
  // The oldest pending event is the first decodable one from the head.
  std::optional<absl::Time> oldest;
  OUTBOX_RETURN_IF_ERROR(ScanPending(
      [&](PendingEvent e) {
        oldest = e.created;
        return false;
      },
      /*batch=*/1));
  if (oldest.has_value()) {
    stats.oldest_pending_age = std::max(absl::ZeroDuration(), Now() - *oldest);
  }
  OUTBOX_ASSIGN_OR_RETURN(stats.disk_bytes, DiskBytes());
  stats.commit_latency = commit_latency_.Snapshot();
  return stats;
}

absl::StatusOr<uint64_t> StoreImpl::DiskBytes() const {
  // Through the store's Env, like every other file of the store (tests
  // give it a fault-injecting file system). A file RocksDB deletes between
  // the listing and its size is simply not counted.
  OUTBOX_ASSIGN_OR_RETURN(const std::vector<std::string> names,
                          ListDirectory(env_, path_));
  uint64_t total = 0;
  for (const std::string& name : names) {
    uint64_t size = 0;
    if (env_->GetFileSize(absl::StrCat(path_, "/", name), &size).ok()) {
      total += size;
    }
  }
  return total;
}

}  // namespace outbox
