// Copyright (c) edge-outbox authors.
//
// The queue side of StoreImpl: what the delivery agent reads and marks.

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/bounded_iterator.h"
#include "lib/codec.h"
#include "lib/crash_points.h"
#include "lib/keys.h"
#include "lib/rocks_status.h"
#include "lib/slices.h"
#include "lib/status_macros.h"
#include "lib/store_impl.h"

namespace outbox {
namespace {

// Counts one pending entry of `bytes` stored bytes out of `state`. Counters
// never wrap below zero: an entry damaged on disk may have changed size, and
// a wrapped byte count would make the queue look full forever. An empty
// queue has zero bytes by definition, which heals any such drift.
void RemovePending(uint64_t bytes, storage::QueueState* state) {
  state->set_pending_count(SaturatingSub(state->pending_count(), 1));
  state->set_pending_bytes(state->pending_count() == 0
                               ? 0
                               : SaturatingSub(state->pending_bytes(), bytes));
}

}  // namespace

absl::StatusOr<DueEvents> StoreImpl::NextDue(
    size_t limit, absl::FunctionRef<bool(const PendingEvent&)> eligible) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  DueEvents due;
  const int64_t now_ms = ToStoredMillis(Now());
  // Held while reading the candidates: a point read each, no scans. The
  // ready set holds exactly the events that are first of their ordering key
  // (FIFO per key) or have none, in (due time, seq) order.
  absl::MutexLock l(&mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  for (const auto& [seq, why] : index_.undecodable()) {
    due.undecodable.push_back(why);
    due.undecodable_seqs.push_back(seq);
  }
  for (const auto& [due_ms, seq] : index_.ready()) {
    if (due_ms > now_ms) {
      due.next_due = FromStoredMillis(due_ms);
      break;
    }
    if (due.events.size() >= limit) {
      due.next_due = FromStoredMillis(now_ms);  // more is due already
      break;
    }
    std::string value;
    rocksdb::Status s =
        db_->Get(rocksdb::ReadOptions(), pending_, keys::Seq(seq), &value);
    if (!s.ok()) {
      // Indexed but unreadable: damage found after open, or (NotFound) an
      // index out of step with the store, which a reopen rebuilds.
      due.undecodable.push_back(
          s.IsNotFound()
              ? absl::InternalError(absl::StrCat(
                    "queue index lists seq ", seq,
                    " which is not stored; reopen the store to rebuild it"))
              : FromRocks(s, absl::StrCat("reading pending seq ", seq)));
      continue;
    }
    absl::StatusOr<storage::OutboxEntry> entry = DecodePendingEntry(seq, value);
    if (!entry.ok()) {
      // Damaged after the index was built: report it like the ones found at
      // open, so the agent can quarantine it.
      due.undecodable.push_back(entry.status());
      due.undecodable_seqs.push_back(seq);
      continue;
    }
    PendingEvent event = ToPendingEvent(*entry);
    if (eligible(event)) due.events.push_back(std::move(event));
  }
  return due;
}

absl::StatusOr<uint64_t> StoreImpl::HeadAfterLocked(uint64_t seq) {
  if (seq + 1 >= state_.next_seq()) return state_.next_seq();
  BoundedIterator it(db_.get(), pending_, keys::Seq(seq + 1),
                     keys::Seq(state_.next_seq()));
  if (it->Valid()) {
    std::optional<uint64_t> next = keys::ParseSeq(View(it->key()));
    if (next.has_value()) return *next;
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), "finding the queue head");
  }
  return state_.next_seq();
}

absl::StatusOr<StoreImpl::StoredEntry> StoreImpl::ReadPendingLocked(
    const PendingEvent& event) {
  StoredEntry stored;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), pending_,
                               keys::Seq(event.seq), &stored.value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(
        absl::StrCat("event ", event.id, " (seq ", event.seq,
                     ") is not pending: already delivered or dead-lettered"));
  }
  if (!s.ok()) return FromRocks(s, "reading a pending event");
  OUTBOX_ASSIGN_OR_RETURN(stored.entry,
                          DecodePendingEntry(event.seq, stored.value));
  if (stored.entry.event_id() != event.id) {
    return absl::NotFoundError(
        absl::StrCat("event ", event.id, " is not pending at seq ", event.seq,
                     " (found event ", stored.entry.event_id(), ")"));
  }
  return stored;
}

absl::Status StoreImpl::RecordAttempt(const PendingEvent& event,
                                      const AttemptRecord& attempt) {
  absl::MutexLock l(&mu_);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  OUTBOX_ASSIGN_OR_RETURN(StoredEntry stored, ReadPendingLocked(event));
  storage::OutboxEntry entry = stored.entry;
  entry.set_attempts(entry.attempts() + 1);
  if (entry.first_attempt_unix_ms() == 0) {
    entry.set_first_attempt_unix_ms(ToStoredMillis(Now()));
  }
  entry.set_next_attempt_unix_ms(ToStoredMillis(attempt.next_attempt));
  entry.set_last_error(attempt.error);
  entry.set_last_http_status(attempt.http_status);
  const std::string value = Encode(entry);
  rocksdb::WriteBatch batch;
  rocksdb::Status s = batch.Put(pending_, keys::Seq(event.seq), value);
  if (!s.ok()) return FromRocks(s, "recording an attempt");
  storage::QueueState next = state_;
  next.set_pending_bytes(
      SaturatingSub(next.pending_bytes(), stored.value.size()) + value.size());
  if (test_.miscount_pending) next.set_pending_count(next.pending_count() + 1);
  internal::CrashPoint(internal::kAttemptBeforeWrite);
  OUTBOX_RETURN_IF_ERROR(
      WriteLocked(&batch, next, "recording a delivery attempt"));
  index_.Reschedule(event.seq, entry.ordering_key(),
                    stored.entry.next_attempt_unix_ms(),
                    entry.next_attempt_unix_ms());
  return absl::OkStatus();
}

absl::Status StoreImpl::MarkDelivered(const PendingEvent& event) {
  absl::MutexLock l(&mu_);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  OUTBOX_ASSIGN_OR_RETURN(StoredEntry stored, ReadPendingLocked(event));
  rocksdb::WriteBatch batch;
  rocksdb::Status s = batch.Delete(pending_, keys::Seq(event.seq));
  if (!s.ok()) return FromRocks(s, "marking delivered");
  storage::QueueState next = state_;
  RemovePending(stored.value.size(), &next);
  next.set_delivered_total(next.delivered_total() + 1);
  if (test_.miscount_delivered_total && event.seq % 16 == 0) {
    next.set_delivered_total(next.delivered_total() + 1);
  }
  if (event.seq == state_.head_seq()) {
    OUTBOX_ASSIGN_OR_RETURN(uint64_t head, HeadAfterLocked(event.seq));
    next.set_head_seq(head);
  }
  internal::CrashPoint(internal::kDeliveredBeforeWrite);
  OUTBOX_RETURN_IF_ERROR(
      test_.mark_delivered_without_wal || test_.head_past_next_when_emptied
          ? TEST_WriteDeliveredLocked(&batch, next)
          : WriteLocked(&batch, next, "marking an event delivered"));
  index_.Remove(event.seq, stored.entry.ordering_key(),
                stored.entry.next_attempt_unix_ms());
  return absl::OkStatus();
}

absl::Status StoreImpl::BuryLocked(uint64_t seq, size_t bytes,
                                   const std::string& dead_key,
                                   const storage::DeadLetter& dead,
                                   absl::string_view what) {
  rocksdb::WriteBatch batch;
  rocksdb::Status s = batch.Delete(pending_, keys::Seq(seq));
  if (s.ok()) s = batch.Put(dead_, dead_key, Encode(dead));
  if (!s.ok()) return FromRocks(s, what);
  storage::QueueState next = state_;
  RemovePending(bytes, &next);
  next.set_dead_count(next.dead_count() + 1);
  if (seq == state_.head_seq()) {
    OUTBOX_ASSIGN_OR_RETURN(uint64_t head, HeadAfterLocked(seq));
    next.set_head_seq(head);
  }
  internal::CrashPoint(internal::kDeadLetterBeforeWrite);
  return WriteLocked(&batch, next, what);
}

absl::Status StoreImpl::MoveToDeadLetters(const PendingEvent& event,
                                          absl::string_view reason) {
  absl::MutexLock l(&mu_);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  OUTBOX_ASSIGN_OR_RETURN(StoredEntry stored, ReadPendingLocked(event));
  storage::DeadLetter dead;
  *dead.mutable_entry() = stored.entry;
  dead.mutable_entry()->set_state(storage::ENTRY_STATE_DEAD);
  dead.set_reason(std::string(reason));
  dead.set_dead_unix_ms(ToStoredMillis(Now()));
  OUTBOX_RETURN_IF_ERROR(BuryLocked(event.seq, stored.value.size(), event.id,
                                    dead,
                                    "moving an event to the dead letters"));
  index_.Remove(event.seq, stored.entry.ordering_key(),
                stored.entry.next_attempt_unix_ms());
  return absl::OkStatus();
}

absl::Status StoreImpl::Quarantine(uint64_t seq) {
  absl::MutexLock l(&mu_);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), pending_, keys::Seq(seq), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(
        absl::StrCat("no pending entry at seq ", seq, " to quarantine"));
  }
  if (!s.ok()) return FromRocks(s, "reading a pending entry");
  absl::StatusOr<storage::OutboxEntry> decoded = DecodePendingEntry(seq, value);
  if (decoded.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("pending entry at seq ", seq, " decodes fine (event ",
                     decoded->event_id(), "); use MoveToDeadLetters"));
  }
  storage::DeadLetter dead;
  const std::string id = absl::StrCat("undecodable-", keys::SeqForHumans(seq));
  dead.mutable_entry()->set_seq(seq);
  dead.mutable_entry()->set_event_id(id);
  dead.mutable_entry()->set_state(storage::ENTRY_STATE_DEAD);
  dead.set_reason(std::string(decoded.status().message()));
  dead.set_dead_unix_ms(ToStoredMillis(Now()));
  dead.set_undecodable_value(value);
  OUTBOX_RETURN_IF_ERROR(BuryLocked(seq, value.size(), id, dead,
                                    "quarantining an undecodable entry"));
  index_.RemoveUndecodable(seq);
  return absl::OkStatus();
}

absl::Status StoreImpl::Replay(absl::string_view event_id) {
  std::string replayed_id(event_id);
  {
    absl::MutexLock l(&mu_);
    OUTBOX_RETURN_IF_ERROR(WritableLocked());
    std::string value;
    rocksdb::Status s =
        db_->Get(rocksdb::ReadOptions(), dead_, replayed_id, &value);
    if (s.IsNotFound()) {
      return absl::NotFoundError(
          absl::StrCat("no dead letter with id ", event_id));
    }
    if (!s.ok()) return FromRocks(s, "reading a dead letter");
    storage::DeadLetter dead;
    OUTBOX_RETURN_IF_ERROR(
        DecodeStored(keys::kDeadFamily, event_id, value, &dead));
    if (!dead.undecodable_value().empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("dead letter ", event_id,
                       " holds an undecodable entry and cannot "
                       "be replayed"));
    }
    // A replayed event goes to the end of the queue under a new seq, keeping
    // its id: receivers that saw an earlier attempt deduplicate it.
    storage::OutboxEntry entry = dead.entry();
    entry.set_seq(state_.next_seq());
    entry.set_state(storage::ENTRY_STATE_PENDING);
    entry.set_attempts(0);
    entry.set_first_attempt_unix_ms(0);
    entry.set_next_attempt_unix_ms(ToStoredMillis(Now()));
    entry.set_last_error("");
    entry.set_last_http_status(0);
    const std::string pending_value = Encode(entry);
    storage::QueueState next = state_;
    next.set_next_seq(next.next_seq() + 1);
    next.set_pending_count(next.pending_count() + 1);
    next.set_pending_bytes(next.pending_bytes() + pending_value.size());
    next.set_dead_count(SaturatingSub(next.dead_count(), 1));
    if (next.pending_count() > options_.max_pending_events ||
        next.pending_bytes() > options_.max_pending_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "outbox is full (Options::max_pending_events/bytes); dead letter ",
          event_id, " stays dead"));
    }
    rocksdb::WriteBatch batch;
    s = batch.Put(pending_, keys::Seq(entry.seq()), pending_value);
    if (s.ok()) s = batch.Delete(dead_, replayed_id);
    if (!s.ok()) return FromRocks(s, "replaying a dead letter");
    internal::CrashPoint(internal::kReplayBeforeWrite);
    OUTBOX_RETURN_IF_ERROR(
        WriteLocked(&batch, next, "replaying a dead letter"));
    index_.Add(entry.seq(), entry.ordering_key(), entry.next_attempt_unix_ms());
  }
  Wake();
  return absl::OkStatus();
}

// Test hooks (StoreTestOptions).

absl::Status StoreImpl::TEST_WriteDeliveredLocked(
    rocksdb::WriteBatch* batch, const storage::QueueState& next) {
  storage::QueueState persisted = next;
  if (test_.head_past_next_when_emptied && next.pending_count() == 0) {
    persisted.set_head_seq(next.next_seq() + 1);
  }
  if (!test_.mark_delivered_without_wal) {
    OUTBOX_RETURN_IF_ERROR(
        WriteLocked(batch, persisted, "marking an event delivered"));
  } else {
    OUTBOX_RETURN_IF_ERROR(WritableLocked());
    rocksdb::Status s =
        batch->Put(meta_, keys::kQueueStateKey, Encode(persisted));
    rocksdb::WriteOptions wo;
    wo.disableWAL = true;  // the bug: durable only at the next flush
    if (s.ok()) s = db_->Write(wo, batch);
    if (!s.ok()) return write_error_ = FromRocks(s, "marking delivered");
  }
  state_ = next;  // in memory the right state: only the persisted one lies
  return absl::OkStatus();
}

}  // namespace outbox
