// Copyright (c) edge-outbox authors.
//
// Event classes in the store (Options::event_classes): a commit that would
// take a class past its limits is refused or evicts the class's oldest
// events; ExpirePending gives up events older than their class allows.
// Either way an event leaves the queue as a dead letter with its reason, or,
// for an eviction with keep_evicted false, as a count: never silently.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/codec.h"
#include "lib/keys.h"
#include "lib/queue_state.h"
#include "lib/rocks_status.h"
#include "lib/store_impl.h"

namespace outbox {
namespace {

// "max_pending_events (N)" or "max_pending_bytes (N)": the limit `after`
// passes, or empty if none.
std::string LimitPassed(const EventClass& c, uint64_t count, uint64_t bytes) {
  if (c.max_pending_events > 0 && count > c.max_pending_events) {
    return absl::StrCat("max_pending_events (", c.max_pending_events, ")");
  }
  if (c.max_pending_bytes > 0 && bytes > c.max_pending_bytes) {
    return absl::StrCat("max_pending_bytes (", c.max_pending_bytes, ")");
  }
  return "";
}

absl::Status ClassFull(const EventClass& c, absl::string_view limit,
                       absl::string_view why) {
  return absl::ResourceExhaustedError(
      absl::StrCat("outbox class ", c.name,
                   " is full: the commit would take "
                   "it past its ",
                   limit, why, "; nothing was written"));
}

}  // namespace

void StoreImpl::QueueClassAddsLocked(const std::vector<CommittedEvent>& events,
                                     int sign) {
  if (classes_.size() == 1) return;  // no classes
  for (const CommittedEvent& e : events) {
    ClassCount& q = class_queued_[classes_.Classify(e.type)];
    if (sign > 0) {
      ++q.count;
      q.bytes += e.bytes;
    } else {
      --q.count;
      q.bytes -= e.bytes;
    }
  }
}

absl::StatusOr<StoreImpl::ClassRoom> StoreImpl::ClassRoomLocked(
    const std::vector<CommittedEvent>& events) {
  absl::flat_hash_map<uint16_t, ClassCount> adds;
  for (const CommittedEvent& e : events) {
    ClassCount& a = adds[classes_.Classify(e.type)];
    ++a.count;
    a.bytes += e.bytes;
  }
  ClassRoom room;
  std::vector<uint64_t>& victims = room.victims;
  for (const auto& [cls, add] : adds) {
    const EventClass* c = classes_.Get(cls);
    if (c == nullptr) continue;
    // Pending: indexed, and in the writer queue (not durable yet).
    const QueueIndex::ClassTally& t = index_.tally(cls);
    const ClassCount& queued = class_queued_[cls];
    uint64_t count = t.count + queued.count + add.count;
    uint64_t bytes = t.bytes + queued.bytes + add.bytes;
    std::string limit = LimitPassed(*c, count, bytes);
    if (limit.empty()) continue;
    if (c->on_full == EventClass::OnFull::kReject) {
      return ClassFull(*c, limit, " (on_full: reject)");
    }
    if (!LimitPassed(*c, add.count, add.bytes).empty()) {
      return ClassFull(*c, limit, ", even with every older event evicted");
    }
    for (auto it = t.seqs.begin(); it != t.seqs.end() && !limit.empty(); ++it) {
      const QueueIndex::Slot* slot = index_.Find(it->first);
      if (slot == nullptr) continue;
      victims.push_back(it->first);
      --count;
      bytes -= slot->bytes;
      limit = LimitPassed(*c, count, bytes);
    }
    // What is left over the limit is commits still in the writer queue,
    // not indexed yet, so not evictable yet: the commit must wait for them
    // (their events then become the oldest to evict), not pass the limit.
    if (!limit.empty()) room.wait_for_queue = true;
  }
  return room;
}

absl::StatusOr<std::vector<uint64_t>> StoreImpl::MakeClassRoomLocked(
    const std::vector<CommittedEvent>& events,
    std::optional<SerialWrite>* serial, bool* waited) {
  OUTBOX_ASSIGN_OR_RETURN(ClassRoom room, ClassRoomLocked(events));
  while (!room.victims.empty() || room.wait_for_queue) {
    *waited = true;
    if (!serial->has_value()) {
      // An eviction reads the entries it gives up, so it is a serial write
      // too; waiting for that lets the queue move, so look again.
      serial->emplace(this);
    } else if (room.wait_for_queue) {
      ++class_room_waits_;
      WaitForQueuedWritersLocked();
    } else {
      return std::move(room.victims);
    }
    OUTBOX_RETURN_IF_ERROR(WritableLocked());
    OUTBOX_ASSIGN_OR_RETURN(room, ClassRoomLocked(events));
  }
  return std::move(room.victims);
}

void StoreImpl::WaitForQueuedWritersLocked() {
  // Every writer queued now is finished (written or failed) once this many
  // have finished: they finish in queue order.
  const uint64_t target = writers_queued_;
  while (writers_finished_ < target) writers_done_cv_.Wait(&mu_);
}

absl::StatusOr<std::optional<StoreImpl::StoredEntry>> StoreImpl::ReadSeqLocked(
    uint64_t seq) {
  StoredEntry stored;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), pending_, keys::Seq(seq), &stored.value);
  if (s.IsNotFound()) return std::nullopt;
  if (!s.ok()) return FromRocks(s, "reading a pending event");
  if (!DecodeStored(keys::kPendingFamily, "a pending entry", stored.value,
                    &stored.entry)
           .ok()) {
    return std::nullopt;  // left for NextDue to report and quarantine
  }
  return stored;
}

absl::Status StoreImpl::BuryLocked(const std::vector<uint64_t>& seqs,
                                   Burial how) {
  if (seqs.empty()) return absl::OkStatus();
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  const absl::Time now = Now();
  rocksdb::WriteBatch batch;
  storage::QueueState next = tail_;
  absl::flat_hash_set<uint64_t> removed;
  std::vector<std::pair<uint64_t, std::string>> changes;  // seq, key
  for (uint64_t seq : seqs) {
    const QueueIndex::Slot* slot = index_.Find(seq);
    if (slot == nullptr) continue;  // settled meanwhile
    OUTBOX_ASSIGN_OR_RETURN(std::optional<StoredEntry> stored,
                            ReadSeqLocked(seq));
    if (!stored.has_value()) continue;
    const std::string& value = stored->value;
    storage::OutboxEntry& entry = stored->entry;
    const EventClass* c = classes_.Get(index_.ClassOfLane(slot->lane));
    const bool keep = how.expired || c == nullptr || c->keep_evicted;
    OUTBOX_RETURN_IF_ERROR(
        FromRocks(batch.Delete(pending_, keys::Seq(seq)), "giving up events"));
    queue_state::Remove(value.size(), &next);
    removed.insert(seq);
    changes.emplace_back(seq, entry.ordering_key());
    if (how.expired) {
      next.set_expired_total(next.expired_total() + 1);
    } else {
      next.set_evicted_total(next.evicted_total() + 1);
    }
    if (!keep) {
      next.set_evicted_deleted_total(next.evicted_deleted_total() + 1);
      continue;
    }
    storage::DeadLetter dead;
    *dead.mutable_entry() = std::move(entry);
    dead.mutable_entry()->set_state(storage::ENTRY_STATE_DEAD);
    dead.set_reason(how.reason(c));
    dead.set_dead_unix_ms(ToStoredMillis(now));
    dead.set_dead_store_clock_ms(store_clock_.NowMs());
    OUTBOX_RETURN_IF_ERROR(
        FromRocks(batch.Put(dead_, dead.entry().event_id(), Encode(dead)),
                  "moving an event to the dead letters"));
    next.set_dead_count(next.dead_count() + 1);
  }
  if (removed.empty()) return absl::OkStatus();
  next.set_head_seq(HeadWithoutLocked(removed));
  return WriteLocked(batch, next, how.expired ? "expiring events" : "evicting",
                     options_.sync, [this, changes = std::move(changes)] {
                       for (const auto& [seq, key] : changes) {
                         index_.Remove(seq, key);
                       }
                     });
}

absl::StatusOr<size_t> StoreImpl::ExpirePending(absl::Time now, size_t limit) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::MutexLock l(&mu_);
  SerialWrite serial(this);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  std::vector<uint64_t> victims;
  for (uint16_t cls = 1; cls < classes_.size() && victims.size() < limit;
       ++cls) {
    const EventClass* c = classes_.Get(cls);
    if (c->expire_after <= absl::ZeroDuration()) continue;
    OUTBOX_RETURN_IF_ERROR(
        ExpiredOfClassLocked(cls, now - c->expire_after, limit, &victims));
  }
  Burial how;
  how.expired = true;
  OUTBOX_RETURN_IF_ERROR(BuryLocked(victims, how));
  return victims.size();
}

absl::Status StoreImpl::ExpiredOfClassLocked(uint16_t cls, absl::Time cutoff,
                                             size_t limit,
                                             std::vector<uint64_t>* victims) {
  // Oldest first, stopping at the first that is young enough: O(expired +
  // the young events committed behind the clock before it, at most 4096). (A
  // wall clock set back between two commits may leave an older event behind a
  // younger one; it then expires when the younger one does.)
  const int64_t expire_ms =
      absl::ToInt64Milliseconds(classes_.Get(cls)->expire_after);
  const int64_t index_now = IndexNow();
  const int64_t store_now = store_clock_.NowMs();
  constexpr size_t kMostPassedOver = 4096;
  size_t passed_over = 0;
  for (const auto& [seq, added_at] : index_.tally(cls).seqs) {
    if (victims->size() >= limit) break;
    OUTBOX_ASSIGN_OR_RETURN(const std::optional<StoredEntry> stored,
                            ReadSeqLocked(seq));
    if (!stored.has_value()) continue;
    const storage::OutboxEntry& entry = stored->entry;
    if (entry.created_clock_behind()) {
      // Committed while the clock was known wrong: its age is the store
      // clock's since its commit, a lower bound no jump moves and no
      // restart resets (entries from before that was stored: the monotonic
      // time since this open indexed it). A young one is passed over, not
      // a stop: its commit time says nothing of the events after it, which
      // it would otherwise hold back for good.
      const int64_t age_ms = entry.created_store_clock_ms() > 0
                                 ? store_now - entry.created_store_clock_ms()
                                 : index_now - added_at;
      // Each young one costs a read under mu_: a board whose clock stays
      // minutes behind its mark flags every commit, so at most
      // kMostPassedOver a check (the older ones expire first, by the store
      // clock, and let the scan reach further).
      if (age_ms < expire_ms && ++passed_over < kMostPassedOver) continue;
      if (age_ms < expire_ms) break;
    } else if (FromStoredMillis(entry.created_unix_ms()) > cutoff) {
      break;
    }
    victims->push_back(seq);
  }
  return absl::OkStatus();
}

std::string StoreImpl::Burial::reason(const EventClass* c) const {
  const std::string name = c == nullptr ? "(none)" : c->name;
  if (expired) {
    return absl::StrCat("expired: pending longer than expire_after (",
                        absl::FormatDuration(c == nullptr ? absl::ZeroDuration()
                                                          : c->expire_after),
                        ") of class ", name);
  }
  return absl::StrCat("evicted: class ", name,
                      " was full (on_full: drop_oldest) and a newer event "
                      "needed its room");
}

}  // namespace outbox
