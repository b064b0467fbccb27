// Copyright (c) edge-outbox authors.
//
// The queue writes of StoreImpl: settling deliveries (delivered, failed
// attempt, dead letter) in one batch, quarantine and replay.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/codec.h"
#include "lib/crash_points.h"
#include "lib/keys.h"
#include "lib/queue_state.h"
#include "lib/rocks_status.h"
#include "lib/store_impl.h"

namespace outbox {
namespace {

// `entry` after the failed attempt `attempt` made at `now`.
storage::OutboxEntry AfterAttempt(const storage::OutboxEntry& entry,
                                  const AttemptRecord& attempt,
                                  absl::Time now) {
  storage::OutboxEntry e = entry;
  const int64_t now_ms = ToStoredMillis(
      attempt.decided != absl::InfinitePast() ? attempt.decided : now);
  e.set_attempts(e.attempts() + 1);
  if (e.first_attempt_unix_ms() == 0) e.set_first_attempt_unix_ms(now_ms);
  if (attempt.retry_age != absl::InfiniteDuration()) {
    e.set_retry_age_ms(absl::ToInt64Milliseconds(attempt.retry_age));
  } else if (entry.attempts() > 0) {
    // The wall-clock gap since the previous attempt (entries written before
    // last_attempt existed count from the first); never negative.
    const int64_t previous = entry.last_attempt_unix_ms() != 0
                                 ? entry.last_attempt_unix_ms()
                                 : entry.first_attempt_unix_ms();
    e.set_retry_age_ms(e.retry_age_ms() +
                       std::max<int64_t>(0, now_ms - previous));
  }
  e.set_last_attempt_unix_ms(now_ms);
  e.set_scheduled_unix_ms(now_ms);
  e.set_next_attempt_unix_ms(ToStoredMillis(attempt.next_attempt));
  e.set_last_error(attempt.error);
  e.set_last_http_status(attempt.http_status);
  return e;
}

// `now` is the wall clock's time, `store_clock_ms` the store clock's
// (retention runs from it).
storage::DeadLetter MakeDeadLetter(const storage::OutboxEntry& entry,
                                   absl::string_view reason, absl::Time now,
                                   int64_t store_clock_ms) {
  storage::DeadLetter dead;
  *dead.mutable_entry() = entry;
  dead.mutable_entry()->set_state(storage::ENTRY_STATE_DEAD);
  dead.set_reason(std::string(reason));
  dead.set_dead_unix_ms(ToStoredMillis(now));
  dead.set_dead_store_clock_ms(store_clock_ms);
  return dead;
}

}  // namespace

// What SettleLocked builds: the batch, the queue state after it, and the
// index changes to apply once it is durable.
struct StoreImpl::SettleBuild {
  struct IndexChange {
    uint64_t seq;
    std::string ordering_key;
    bool remove;
    int64_t due_ms;      // the new next-attempt time, when !remove
    int64_t decided_ms;  // when it was computed, when !remove
    uint32_t bytes;      // the entry's new size, when !remove
    // Back to its untargeted lane (a workflow step done: the next request's
    // destination is not known yet; see Store::Relane).
    bool untarget = false;
  };
  // Takes pending entry `seq` (`bytes` stored) out of the queue.
  absl::Status Remove(rocksdb::ColumnFamilyHandle* pending, uint64_t seq,
                      absl::string_view ordering_key, uint64_t bytes,
                      absl::string_view what) {
    queue_state::Remove(bytes, &next);
    removed.insert(seq);
    changes.push_back({seq, std::string(ordering_key), true, 0, 0, 0});
    return FromRocks(batch.Delete(pending, keys::Seq(seq)), what);
  }
  rocksdb::WriteBatch batch;
  storage::QueueState next;
  absl::flat_hash_set<uint64_t> removed;
  std::vector<IndexChange> changes;
  bool delivered = false, attempted = false, buried = false;
};

absl::StatusOr<SettleResult> StoreImpl::Settle(
    const std::vector<Settlement>& settlements) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::MutexLock l(&mu_);
  return SettleLocked(settlements, /*sync=*/false);
}

absl::StatusOr<SettleResult> StoreImpl::SettleLocked(
    const std::vector<Settlement>& settlements, bool sync) {
  SerialWrite serial(this);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  SettleResult result;
  SettleBuild build;
  build.next = tail_;
  const absl::Time now = Now();
  absl::flat_hash_set<uint64_t> seen;
  for (const Settlement& st : settlements) {
    if (!seen.insert(st.event.seq).second) {
      result.not_pending.push_back(st.event.id);  // listed twice
      continue;
    }
    const bool workflow =
        !st.workflow_state.empty() || !st.workflow_results.empty();
    if (st.kind == Settlement::Kind::kDelivered && !workflow) {
      // A delivery needs nothing from the stored entry but its size, which
      // the index holds: no read. (Seqs are never reused, so an indexed seq
      // is still the event NextDue returned.)
      const QueueIndex::Slot* slot = index_.Find(st.event.seq);
      if (slot == nullptr) {
        result.not_pending.push_back(st.event.id);
        continue;
      }
      OUTBOX_RETURN_IF_ERROR(AddDeliveredLocked(st, slot->bytes, &build));
      ++result.applied;
      continue;
    }
    absl::StatusOr<StoredEntry> stored = ReadPendingLocked(st.event);
    if (absl::IsNotFound(stored.status())) {
      result.not_pending.push_back(st.event.id);
      continue;
    }
    if (!stored.ok()) return stored.status();
    Settlement::Kind kind = st.kind;
    if (workflow) {
      OUTBOX_RETURN_IF_ERROR(AddWorkflowWritesLocked(
          st, stored->entry, &kind, &build.batch, &build.next));
      if (kind != st.kind) result.kept_for_cancel.push_back(st.event.id);
    }
    OUTBOX_RETURN_IF_ERROR(AddSettlementLocked(st, kind, *stored, now, &build));
    ++result.applied;
  }
  if (result.applied == 0) return result;
  if (!build.removed.empty()) {
    build.next.set_head_seq(HeadWithoutLocked(build.removed));
  }
  if (build.delivered) internal::CrashPoint(internal::kDeliveredBeforeWrite);
  if (build.attempted) internal::CrashPoint(internal::kAttemptBeforeWrite);
  if (build.buried) internal::CrashPoint(internal::kDeadLetterBeforeWrite);
  auto apply = [&] {
    for (const SettleBuild::IndexChange& c : build.changes) {
      if (c.remove) {
        index_.Remove(c.seq, c.ordering_key);
      } else {
        index_.Reschedule(c.seq, c.ordering_key,
                          IndexDue(c.due_ms, c.decided_ms), c.bytes);
        if (c.untarget) UntargetLocked(c.seq);
      }
    }
  };
  if (variant_->SettlesWithoutLog(build.delivered)) {
    OUTBOX_RETURN_IF_ERROR(TEST_WriteWithoutWalLocked(&build, apply));
    return result;
  }
  OUTBOX_RETURN_IF_ERROR(
      WriteLocked(build.batch, build.next, "settling deliveries", sync, apply));
  // (A group written after this one may have raised it already: a later
  // mark only asks a little more of RequestSync.)
  result.written = written_mark_;
  return result;
}

absl::Status StoreImpl::AddDeliveredLocked(const Settlement& st, uint32_t bytes,
                                           SettleBuild* build) {
  const uint64_t seq = st.event.seq;
  OUTBOX_RETURN_IF_ERROR(build->Remove(pending_, seq, st.event.ordering_key,
                                       bytes, "marking an event delivered"));
  build->next.set_delivered_total(
      variant_->DeliveredTotal(seq, build->next.delivered_total() + 1));
  build->delivered = true;
  return absl::OkStatus();
}

namespace {

// Whether `entry` is as ResetForQueue leaves it, due by `now_ms`: no
// attempt since the last reset (the step answered at its first try).
bool Untouched(const storage::OutboxEntry& entry, int64_t now_ms) {
  return entry.state() == storage::ENTRY_STATE_PENDING &&
         entry.attempts() == 0 && entry.first_attempt_unix_ms() == 0 &&
         entry.last_attempt_unix_ms() == 0 && entry.retry_age_ms() == 0 &&
         entry.last_error().empty() && entry.last_http_status() == 0 &&
         entry.next_attempt_unix_ms() <= now_ms;
}

}  // namespace

absl::Status StoreImpl::AddStepDoneLocked(const StoredEntry& stored,
                                          absl::Time now, SettleBuild* build) {
  // The same entry (same seq, so it stays first of its ordering key), due
  // at once with a fresh retry budget for the next step.
  const int64_t now_ms = ToStoredMillis(now);
  if (Untouched(stored.entry, now_ms)) {
    // Nothing to reset, and due already, after a reopen too: only the
    // index learns that it is due now. Rewriting the entry would cost its
    // whole size for every step (the O(n) per workflow), whether
    // the workflow is written as rows or as one state.
    build->changes.push_back({stored.entry.seq(), stored.entry.ordering_key(),
                              false, now_ms, now_ms,
                              static_cast<uint32_t>(stored.value.size()),
                              /*untarget=*/true});
    return absl::OkStatus();
  }
  storage::OutboxEntry entry = stored.entry;
  queue_state::ResetForQueue(entry.seq(), now_ms, &entry);
  const std::string value = Encode(entry);
  rocksdb::Status s = build->batch.Put(pending_, keys::Seq(entry.seq()), value);
  queue_state::Resize(stored.value.size(), value.size(), &build->next);
  build->changes.push_back({entry.seq(), stored.entry.ordering_key(), false,
                            entry.next_attempt_unix_ms(),
                            entry.scheduled_unix_ms(),
                            static_cast<uint32_t>(value.size()),
                            /*untarget=*/true});
  build->attempted = true;
  return FromRocks(s, "recording a workflow step");
}

absl::Status StoreImpl::AddSettlementLocked(const Settlement& st,
                                            Settlement::Kind kind,
                                            const StoredEntry& stored,
                                            absl::Time now,
                                            SettleBuild* build) {
  const uint64_t seq = st.event.seq;
  if (kind == Settlement::Kind::kDelivered) {
    return AddDeliveredLocked(st, static_cast<uint32_t>(stored.value.size()),
                              build);
  }
  if (kind == Settlement::Kind::kStepDone) {
    return AddStepDoneLocked(stored, now, build);
  }
  if (kind == Settlement::Kind::kAttempt) {
    const storage::OutboxEntry entry =
        AfterAttempt(stored.entry, st.attempt, now);
    const std::string value = Encode(entry);
    rocksdb::Status s = build->batch.Put(pending_, keys::Seq(seq), value);
    queue_state::Resize(stored.value.size(), value.size(), &build->next);
    build->next.set_pending_count(
        variant_->PendingAfterAttempt(build->next.pending_count()));
    build->changes.push_back(
        {seq, stored.entry.ordering_key(), false, entry.next_attempt_unix_ms(),
         entry.scheduled_unix_ms(), static_cast<uint32_t>(value.size())});
    build->attempted = true;
    return FromRocks(s, "recording a delivery attempt");
  }
  OUTBOX_RETURN_IF_ERROR(build->Remove(
      pending_, seq, stored.entry.ordering_key(), stored.value.size(),
      "moving an event to the dead letters"));
  // A dead letter keeps its last attempt: its HTTP status and the count.
  const storage::OutboxEntry last =
      kind == Settlement::Kind::kDeadLetter
          ? AfterAttempt(stored.entry, st.attempt, now)
          : stored.entry;
  rocksdb::Status s = build->batch.Put(
      dead_, st.event.id,
      Encode(MakeDeadLetter(last, st.reason, now, store_clock_.NowMs())));
  build->next.set_dead_count(build->next.dead_count() + 1);
  build->buried = true;
  return FromRocks(s, "moving an event to the dead letters");
}

absl::Status StoreImpl::SettleOne(Settlement settlement) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::MutexLock l(&mu_);
  OUTBOX_ASSIGN_OR_RETURN(const SettleResult result,
                          SettleLocked({settlement}, options_.sync));
  if (result.applied == 0) {
    return absl::NotFoundError(absl::StrCat(
        "event ", settlement.event.id, " (seq ", settlement.event.seq,
        ") is not pending: already delivered or dead-lettered"));
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::MarkDelivered(const PendingEvent& event) {
  Settlement st;
  st.kind = Settlement::Kind::kDelivered;
  st.event = event;
  return SettleOne(std::move(st));
}

absl::Status StoreImpl::RecordAttempt(const PendingEvent& event,
                                      const AttemptRecord& attempt) {
  Settlement st;
  st.kind = Settlement::Kind::kAttempt;
  st.event = event;
  st.attempt = attempt;
  return SettleOne(std::move(st));
}

absl::Status StoreImpl::MoveToDeadLetters(const PendingEvent& event,
                                          absl::string_view reason) {
  Settlement st;
  st.kind = Settlement::Kind::kDeadLetterUnsent;
  st.event = event;
  st.reason = std::string(reason);
  return SettleOne(std::move(st));
}

absl::Status StoreImpl::Quarantine(uint64_t seq) {
  absl::MutexLock l(&mu_);
  SerialWrite serial(this);
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
  dead.set_dead_store_clock_ms(store_clock_.NowMs());
  dead.set_undecodable_value(value);
  dead.set_undecodable(true);  // explicit: `value` may well be empty
  rocksdb::WriteBatch batch;
  s = batch.Delete(pending_, keys::Seq(seq));
  if (s.ok()) s = batch.Put(dead_, id, Encode(dead));
  if (!s.ok()) return FromRocks(s, "quarantining an undecodable entry");
  storage::QueueState next = tail_;
  queue_state::Remove(value.size(), &next);
  next.set_dead_count(next.dead_count() + 1);
  next.set_head_seq(HeadWithoutLocked({seq}));
  internal::CrashPoint(internal::kDeadLetterBeforeWrite);
  return WriteLocked(batch, next, "quarantining an undecodable entry",
                     options_.sync,
                     [this, seq] { index_.RemoveUndecodable(seq); });
}

absl::Status StoreImpl::Replay(absl::string_view event_id) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  {
    absl::MutexLock l(&mu_);
    OUTBOX_RETURN_IF_ERROR(ReplayLocked(event_id, nullptr));
  }
  Wake();
  return absl::OkStatus();
}

absl::Status StoreImpl::ReplayLocked(absl::string_view event_id,
                                     const storage::WorkflowState* state) {
  SerialWrite serial(this);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  const std::string id(event_id);
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), dead_, id, &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(
        absl::StrCat("no dead letter with id ", event_id));
  }
  if (!s.ok()) return FromRocks(s, "reading a dead letter");
  storage::DeadLetter dead;
  OUTBOX_RETURN_IF_ERROR(
      DecodeStored(keys::kDeadFamily, event_id, value, &dead));
  // Without a type it is no event either (Commit refuses one): that is
  // what quarantining an empty value left before DeadLetter.undecodable.
  if (IsUndecodable(dead) || dead.entry().type().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("dead letter ", event_id,
                     " holds an undecodable entry and cannot be replayed"));
  }
  OUTBOX_ASSIGN_OR_RETURN(const std::optional<storage::WorkflowState> old,
                          ReadWorkflowStateLocked(id));
  if (state == nullptr && old.has_value()) {
    // Sending it again as it is would rerun steps that were reverted.
    return absl::FailedPreconditionError(absl::StrCat(
        "dead letter ", event_id,
        " is a workflow whose steps ran: resume it from a step with "
        "outboxctl retry-step"));
  }
  // A replayed event goes to the end of the queue under a new seq, keeping
  // its id: receivers that saw an earlier attempt deduplicate it.
  storage::OutboxEntry entry = dead.entry();
  storage::QueueState next = tail_;
  const int64_t now_ms = ToStoredMillis(Now());
  queue_state::ResetForQueue(next.next_seq(), now_ms, &entry);
  const std::string pending_value = Encode(entry);
  queue_state::Append(pending_value.size(), &next);
  next.set_dead_count(queue_state::SaturatingSub(next.dead_count(), 1));
  OUTBOX_RETURN_IF_ERROR(queue_state::CheckCapacity(
      next, options_, absl::StrCat("replaying dead letter ", event_id)));
  rocksdb::WriteBatch batch;
  s = batch.Put(pending_, keys::Seq(entry.seq()), pending_value);
  if (s.ok()) s = batch.Delete(dead_, id);
  if (s.ok() && state != nullptr) {
    OUTBOX_RETURN_IF_ERROR(
        AddRetriedStateLocked(id, old, *state, &batch, &next));
  }
  if (!s.ok()) return FromRocks(s, "replaying a dead letter");
  internal::CrashPoint(internal::kReplayBeforeWrite);
  return WriteLocked(
      batch, next, "replaying a dead letter", options_.sync, [&] {
        IndexEntryLocked(entry.seq(), entry.ordering_key(), entry.destination(),
                         entry.type(),
                         IndexDue(entry.next_attempt_unix_ms(), now_ms),
                         pending_value.size());
      });
}

// The broken variant's own write (StoreVariant::SettlesWithoutLog).

absl::Status StoreImpl::TEST_WriteWithoutWalLocked(
    SettleBuild* build, std::function<void()> apply) {
  // Only the single-threaded crash suites set this: nothing else is queued.
  while (!writers_.empty()) serial_cv_.Wait(&mu_);
  rocksdb::Status s =
      build->batch.Put(meta_, keys::kQueueStateKey, Encode(build->next));
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;  // the bug: durable only at the next flush
  if (s.ok()) s = db_->Write(wo, &build->batch);
  if (!s.ok()) return write_error_ = FromRocks(s, "settling deliveries");
  state_ = tail_ = build->next;
  apply();
  return absl::OkStatus();
}

}  // namespace outbox
