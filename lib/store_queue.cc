// Copyright (c) edge-outbox authors.
//
// The queue side of StoreImpl that the agent reads: the index's clock,
// NextDue, and reading pending entries without walking tombstones.

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/codec.h"
#include "lib/keys.h"
#include "lib/rocks_status.h"
#include "lib/slices.h"
#include "lib/store_impl.h"

namespace outbox {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// a - b and a + b, held inside int64 (stored times use its extremes for
// "never" and "always").
int64_t SatSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? kNever : -kNever;
  return r;
}
int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kNever : -kNever;
  return r;
}

}  // namespace

int64_t StoreImpl::IndexNow() const {
  return absl::ToInt64Milliseconds(clock_->Monotonic());
}

int64_t StoreImpl::IndexDue(int64_t due_ms, int64_t written_ms,
                            ClockBack clock_back) const {
  return IndexDueAt(due_ms, written_ms, clock_back, ToStoredMillis(Now()),
                    IndexNow());
}

int64_t StoreImpl::IndexDueAt(int64_t due_ms, int64_t written_ms,
                              ClockBack clock_back, int64_t now_ms,
                              int64_t index_now) {
  if (due_ms == kNever) return kNever;
  int64_t delay = SatSub(due_ms, now_ms);
  // The wall clock went back since the due time was written (a board that
  // booted with a stale clock, say): the event is not due years ahead.
  if (now_ms < written_ms) {
    delay = clock_back == ClockBack::kDueNow
                ? 0
                : std::min(delay, SatSub(due_ms, written_ms));
  }
  return SatAdd(index_now, std::max<int64_t>(0, delay));
}

void StoreImpl::IndexEntryLocked(uint64_t seq, absl::string_view ordering_key,
                                 absl::string_view destination,
                                 absl::string_view type, int64_t due,
                                 size_t bytes) {
  index_.Add(seq, ordering_key, index_.LaneOf(destination, type), due,
             static_cast<uint32_t>(bytes), IndexNow());
}

absl::StatusOr<DueEvents> StoreImpl::NextDue(
    size_t limit, absl::FunctionRef<LaneGate(const Lane&)> gate,
    absl::FunctionRef<bool(uint64_t seq)> skip) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  DueEvents due;
  std::vector<uint64_t> seqs;
  {
    // Only the index is read under the lock: committers never wait behind
    // the store's reads of events it will not return.
    absl::MutexLock l(&mu_);
    OUTBOX_RETURN_IF_ERROR(DbReady());
    for (const auto& [seq, why] : index_.undecodable()) {
      due.unreadable.push_back({seq, why});
    }
    const int64_t now = IndexNow();
    QueueIndex::Picked picked = index_.PickDue(
        now, limit,
        [&](uint32_t id) {
          const QueueIndex::LaneInfo& info = index_.lane(id);
          return gate(Lane{id, info.destination, info.type, info.target});
        },
        skip);
    seqs = std::move(picked.seqs);
    if (picked.next_due != kNever) {
      due.wait =
          absl::Milliseconds(std::max<int64_t>(0, picked.next_due - now));
      due.next_due = Now() + due.wait;
    }
  }
  ReadEntries(seqs, /*missing_is_error=*/true, &due);
  return due;
}

absl::StatusOr<std::vector<PendingEvent>> StoreImpl::KeyFollowers(
    const PendingEvent& head, size_t limit) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  std::vector<uint64_t> seqs;
  {
    absl::MutexLock l(&mu_);
    OUTBOX_RETURN_IF_ERROR(DbReady());
    seqs = index_.Followers(head.ordering_key, head.seq, limit);
  }
  DueEvents read;
  ReadEntries(seqs, /*missing_is_error=*/true, &read);
  // In key order, up to the first one that could not be read (the next
  // NextDue reports it once it heads its key).
  std::vector<PendingEvent> out;
  size_t next = 0;
  for (PendingEvent& e : read.events) {
    if (next >= seqs.size() || e.seq != seqs[next]) break;
    out.push_back(std::move(e));
    ++next;
  }
  return out;
}

void StoreImpl::ReadEntries(const std::vector<uint64_t>& seqs,
                            bool missing_is_error, DueEvents* due) {
  if (seqs.empty()) return;
  std::vector<std::string> keys;
  keys.reserve(seqs.size());
  for (uint64_t seq : seqs) keys.push_back(keys::Seq(seq));
  std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
  std::vector<rocksdb::PinnableSlice> values(seqs.size());
  std::vector<rocksdb::Status> statuses(seqs.size());
  absl::ReaderMutexLock r(&db_mu_);
  if (!DbReady().ok()) return;  // the next NextDue says why
  db_->MultiGet(rocksdb::ReadOptions(), pending_, slices.size(), slices.data(),
                values.data(), statuses.data());
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (statuses[i].IsNotFound() && !missing_is_error) continue;  // settled
    if (!statuses[i].ok()) {
      // Indexed but unreadable: damage found after open, or (NotFound) an
      // index out of step with the store, which a reopen rebuilds.
      due->unreadable.push_back(
          {seqs[i],
           statuses[i].IsNotFound()
               ? absl::InternalError(absl::StrCat(
                     "queue index lists seq ", seqs[i],
                     " which is not stored; reopen the store to rebuild it"))
               : FromRocks(statuses[i],
                           absl::StrCat("reading pending seq ", seqs[i]))});
      continue;
    }
    absl::StatusOr<storage::OutboxEntry> entry =
        DecodePendingEntry(seqs[i], View(values[i]));
    if (!entry.ok()) {
      // Damaged after the index was built: report it like the ones found at
      // open, so the agent can quarantine it.
      due->unreadable.push_back({seqs[i], entry.status()});
      continue;
    }
    due->events.push_back(ToPendingEvent(*entry));
  }
}

absl::Status StoreImpl::ScanPending(absl::FunctionRef<bool(PendingEvent)> visit,
                                    size_t batch) {
  const size_t kBatch = std::max<size_t>(1, std::min<size_t>(batch, 256));
  uint64_t from = 0;
  while (true) {
    std::vector<uint64_t> seqs;
    {
      absl::MutexLock l(&mu_);
      OUTBOX_RETURN_IF_ERROR(DbReady());
      for (auto it = index_.seqs().lower_bound(from);
           it != index_.seqs().end() && seqs.size() < kBatch; ++it) {
        if (it->second.lane != QueueIndex::kNoLane) seqs.push_back(it->first);
      }
    }
    if (seqs.empty()) return absl::OkStatus();
    from = seqs.back() + 1;
    DueEvents read;
    ReadEntries(seqs, /*missing_is_error=*/false, &read);
    for (PendingEvent& e : read.events) {
      if (!visit(std::move(e))) return absl::OkStatus();
    }
    if (seqs.size() < kBatch) return absl::OkStatus();
  }
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

uint64_t StoreImpl::HeadWithoutLocked(
    const absl::flat_hash_set<uint64_t>& removed) const {
  for (const auto& [seq, slot] : index_.seqs()) {
    if (!removed.contains(seq)) return seq;
  }
  return state_.next_seq();
}

}  // namespace outbox
