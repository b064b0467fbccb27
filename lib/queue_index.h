// Copyright (c) edge-outbox authors.
//
// QueueIndex: the in-memory schedule of the pending queue.
//
// The pending column family is the truth; the index is derived from it at
// open, updated after every durable write, and never persisted. It answers
// "what can be sent now" with work that does not grow with the events that
// cannot be sent:
//   - a lane is the set of events sharing a destination name, an event
//     type and a target (the destination a workflow event's next request
//     needs, when the caller said so with Relane; empty otherwise), which
//     the agent routes, pauses and probes as a whole. Each lane
//     keeps its ready events, ordered by (due time, seq); a lane the caller
//     closes (its destination unreachable or paused) costs one call, however
//     many events wait in it;
//   - an event is ready when it has no ordering key, or is the first pending
//     event of its key (FIFO per key); the others wait in their key's queue;
//   - every pending seq, in order, so that the queue's head and the first N
//     pending events are found without walking the tombstones deliveries
//     leave between live entries;
//   - per event class (lib/event_classes.h, classified once per lane): its
//     pending count and bytes, for its limits, and for a class that may
//     evict or expire, its pending seqs in order (the oldest first).
// Due times are int64 on whatever clock the caller uses (the store uses a
// monotonic clock, see store_open.cc), so wall-clock jumps do not move them.
//
// Memory (tests/bench/queue_index_memory_bench): see docs/measured.md.
//
// REQUIRES: External synchronization.

#ifndef OUTBOX_LIB_QUEUE_INDEX_H_
#define OUTBOX_LIB_QUEUE_INDEX_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lib/event_classes.h"
#include "outbox/store.h"

namespace outbox {

class QueueIndex {
 public:
  // `classes` is borrowed and must outlive the index; nullptr: no classes.
  explicit QueueIndex(const EventClasses* classes = nullptr)
      : classes_(classes) {}

  struct LaneInfo {
    std::string destination;
    std::string type;
    std::string target;                  // empty: none recorded
    uint16_t cls = EventClasses::kNone;  // the type's class
    int priority = 0;                    // the class's priority
  };
  // The lane of (destination, type, target), created on first use. Ids are
  // dense (0, 1, ...) and stable for the life of the index.
  uint32_t LaneOf(absl::string_view destination, absl::string_view type,
                  absl::string_view target = {});
  const LaneInfo& lane(uint32_t id) const { return lanes_[id].info; }
  // The lane's pending events: ready ones and those waiting behind their
  // ordering key's head alike.
  size_t pending(uint32_t id) const { return lanes_[id].pending; }
  size_t lane_count() const { return lanes_.size(); }

  // Adds a pending event whose stored entry is `bytes` long, at index time
  // `added_at` (the caller's clock, as due times). REQUIRES: `seq` is not in
  // the index and is greater than every seq added before with the same
  // non-empty `ordering_key` (commit order).
  void Add(uint64_t seq, absl::string_view ordering_key, uint32_t lane,
           int64_t due, uint32_t bytes, int64_t added_at = 0);

  // Removes a pending event (delivered, dead-lettered); the next event of its
  // ordering key, if any, becomes ready. No-op if `seq` is not indexed.
  void Remove(uint64_t seq, absl::string_view ordering_key);

  // Moves an event's due time to `due`; its entry is now `bytes` long.
  // No-op if `seq` is not indexed.
  void Reschedule(uint64_t seq, absl::string_view ordering_key, int64_t due,
                  uint32_t bytes);

  // Moves a pending event to lane `lane`, keeping its due time and its place
  // in its ordering key: a ready event is ready in `lane` now, one waiting
  // behind its key's head still waits (FIFO per key holds across lanes,
  // since only a key's head is ever ready). O(log n). No-op if `seq` is not
  // indexed (or undecodable).
  void Relane(uint64_t seq, uint32_t lane);

  // The seqs queued behind `head` under `ordering_key`, oldest first, at
  // most `limit`; empty unless `head` is that key's first event. O(limit).
  std::vector<uint64_t> Followers(absl::string_view ordering_key, uint64_t head,
                                  size_t limit) const;
  // The due time of a pending event; int64 max if `seq` is not indexed.
  int64_t DueOf(uint64_t seq) const;

  // Pending entries that could not be decoded, with why: reported by every
  // NextDue until quarantined. They count as pending (they hold the head).
  void AddUndecodable(uint64_t seq, absl::Status why);
  void RemoveUndecodable(uint64_t seq);
  const std::map<uint64_t, absl::Status>& undecodable() const {
    return undecodable_;
  }

  // What PickDue chose.
  struct Picked {
    std::vector<uint64_t> seqs;  // in (due, seq) order
    // The earliest due time of an event left in a lane that was not closed
    // (`now` when the limit cut the pick short), or of the first event of a
    // lane with nothing due yet; int64 max if none.
    int64_t next_due = std::numeric_limits<int64_t>::max();
  };
  // Up to `limit` ready events due at `now`, in (priority, due, seq) order
  // across the lanes, the highest priority first. `gate` is called once for
  // each lane with an event due, and `skip` for each candidate; a skipped event
  // is not picked but still holds its ordering key. Costs O(lanes + (limit +
  // skipped) log lanes).
  Picked PickDue(int64_t now, size_t limit,
                 absl::FunctionRef<LaneGate(uint32_t lane)> gate,
                 absl::FunctionRef<bool(uint64_t seq)> skip) const;

  // Every pending seq, decodable or not, in ascending order.
  struct Slot {
    int64_t due;
    uint32_t lane;   // kNoLane for an undecodable entry
    uint32_t bytes;  // the stored entry's size (fits the padding)
  };
  // The slot of a pending decodable event; nullptr if `seq` is not one.
  const Slot* Find(uint64_t seq) const;
  static constexpr uint32_t kNoLane = std::numeric_limits<uint32_t>::max();
  using Seqs = absl::btree_map<uint64_t, Slot>;
  const Seqs& seqs() const { return seqs_; }

  // The ready events of lane `id` in (due, seq) order (for tests).
  using Ready = absl::btree_set<std::pair<int64_t, uint64_t>>;
  const Ready& ready(uint32_t id) const { return lanes_[id].ready; }
  size_t ready_count() const;
  size_t keyed_events() const { return keyed_events_; }

  // A class's pending events (decodable ones; undecodable entries have no
  // type, hence no class).
  struct ClassTally {
    uint64_t count = 0;
    uint64_t bytes = 0;
    // Every pending seq of the class, ascending, with the index time it was
    // added; kept only for a class that may evict or expire
    // (EventClasses::NeedsOrder): others pay nothing.
    absl::btree_map<uint64_t, int64_t> seqs;
  };
  const ClassTally& tally(uint16_t cls) const;
  // The class of lane `id`.
  uint16_t ClassOfLane(uint32_t id) const { return lanes_[id].info.cls; }

 private:
  // The pending seqs of one ordering key, oldest first: a vector with a
  // moving front, compacted as it drains. (std::deque would allocate a
  // 512-byte block even for the common key with one or two events.)
  struct KeyQueue {
    std::vector<uint64_t> seqs;
    size_t front = 0;  // seqs before it are gone

    bool empty() const { return front == seqs.size(); }
    uint64_t head() const { return seqs[front]; }
    void PopFront();
  };
  struct Lane {
    LaneInfo info;
    Ready ready;
    size_t pending = 0;
  };

  void MakeReady(uint64_t seq, const Slot& slot) {
    Ready& ready = lanes_[slot.lane].ready;
    const std::pair<int64_t, uint64_t> item{slot.due, seq};
    // Commits and an open add in (due, seq) order nearly always: inserting
    // at the end needs no search from the root.
    if (ready.empty() || *ready.rbegin() < item) {
      ready.insert(ready.end(), item);
    } else {
      ready.insert(item);
    }
  }
  void UnmakeReady(uint64_t seq, const Slot& slot) {
    lanes_[slot.lane].ready.erase({slot.due, seq});
  }
  // True if `seq` is ready: unkeyed, or the head of its key.
  bool IsReady(uint64_t seq, absl::string_view ordering_key) const;

  void Count(uint64_t seq, const Slot& slot, int64_t sign, int64_t added_at);

  const EventClasses* classes_;
  std::vector<ClassTally> tallies_;  // by class id, grown on first use
  std::vector<Lane> lanes_;
  absl::flat_hash_map<std::string, uint32_t> lane_ids_;
  uint32_t last_lane_ = kNoLane;  // LaneOf's last answer
  absl::flat_hash_map<std::string, KeyQueue> by_key_;
  Seqs seqs_;
  std::map<uint64_t, absl::Status> undecodable_;
  size_t keyed_events_ = 0;
};

}  // namespace outbox

#endif  // OUTBOX_LIB_QUEUE_INDEX_H_
