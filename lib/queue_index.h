// Copyright (c) edge-outbox authors.
//
// QueueIndex: the in-memory schedule of the pending queue.
//
// Finding the next due events by scanning the pending column family costs
// O(backlog) per call whenever events wait behind an earlier event of their
// ordering key or for their retry time: a backlog of 200k events in four
// ordering keys made every NextDue(64) walk all 200k entries. The index keeps
// just enough in memory to answer in O(limit * log n):
//   - per ordering key, the pending events of that key in commit order
//     (seq and due time, 16 bytes each);
//   - the "ready" set: every event that is first of its ordering key, and
//     every event without one, ordered by (due time, seq).
// It is rebuilt from the pending column family when the store opens and is
// updated after every successful write, under the store's write mutex. The
// column family stays the truth; the index is derived and never persisted.
//
// Memory (tests/bench/queue_index_memory_bench, 1M events): 18.7 bytes per
// unkeyed event, 16.9 per event with 16 keys, 187 per event when every event
// has a key of its own (a hash map slot, the key and a vector per key).
//
// REQUIRES: External synchronization.

#ifndef OUTBOX_LIB_QUEUE_INDEX_H_
#define OUTBOX_LIB_QUEUE_INDEX_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace outbox {

class QueueIndex {
 public:
  // Adds a pending event. REQUIRES: `seq` is greater than every seq added
  // before with the same non-empty `ordering_key` (commit order).
  void Add(uint64_t seq, absl::string_view ordering_key, int64_t due_ms);

  // Removes a pending event (delivered, dead-lettered); the next event of its
  // ordering key, if any, becomes ready. `due_ms` is its current due time.
  void Remove(uint64_t seq, absl::string_view ordering_key, int64_t due_ms);

  // Moves an event's due time from `old_due_ms` to `new_due_ms`.
  void Reschedule(uint64_t seq, absl::string_view ordering_key,
                  int64_t old_due_ms, int64_t new_due_ms);

  // Pending entries that could not be decoded when the index was built,
  // with why: reported by every NextDue until quarantined.
  void AddUndecodable(uint64_t seq, absl::Status why) {
    undecodable_[seq] = std::move(why);
  }
  void RemoveUndecodable(uint64_t seq) { undecodable_.erase(seq); }
  const std::map<uint64_t, absl::Status>& undecodable() const {
    return undecodable_;
  }

  // The ready set in (due_ms, seq) order.
  using Ready = absl::btree_set<std::pair<int64_t, uint64_t>>;
  const Ready& ready() const { return ready_; }

  size_t keyed_events() const { return keyed_events_; }

 private:
  struct Item {
    uint64_t seq;
    int64_t due_ms;
  };
  // The pending events of one ordering key, oldest first: a vector with a
  // moving front, compacted as it drains. (std::deque would allocate a
  // 512-byte block even for the common key with one or two events.)
  struct KeyQueue {
    std::vector<Item> items;
    size_t front = 0;  // items before it are gone

    bool empty() const { return front == items.size(); }
    const Item& head() const { return items[front]; }
    void PopFront();
  };

  absl::flat_hash_map<std::string, KeyQueue> by_key_;
  Ready ready_;
  std::map<uint64_t, absl::Status> undecodable_;
  size_t keyed_events_ = 0;
};

}  // namespace outbox

#endif  // OUTBOX_LIB_QUEUE_INDEX_H_
