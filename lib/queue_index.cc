// Copyright (c) edge-outbox authors.

#include "lib/queue_index.h"

#include <algorithm>

namespace outbox {

void QueueIndex::KeyQueue::PopFront() {
  ++front;
  // Drop the consumed prefix once it is half the vector: O(1) amortized.
  if (front * 2 >= items.size()) {
    items.erase(items.begin(), items.begin() + front);
    front = 0;
  }
}

void QueueIndex::Add(uint64_t seq, absl::string_view ordering_key,
                     int64_t due_ms) {
  if (ordering_key.empty()) {
    ready_.insert({due_ms, seq});
    return;
  }
  KeyQueue& queue = by_key_[ordering_key];
  if (queue.empty()) ready_.insert({due_ms, seq});
  queue.items.push_back(Item{seq, due_ms});
  ++keyed_events_;
}

void QueueIndex::Remove(uint64_t seq, absl::string_view ordering_key,
                        int64_t due_ms) {
  if (ordering_key.empty()) {
    ready_.erase({due_ms, seq});
    return;
  }
  auto key_it = by_key_.find(ordering_key);
  if (key_it == by_key_.end()) return;
  KeyQueue& queue = key_it->second;
  if (!queue.empty() && queue.head().seq == seq) {
    ready_.erase({queue.head().due_ms, seq});
    queue.PopFront();
    --keyed_events_;
    if (!queue.empty()) ready_.insert({queue.head().due_ms, queue.head().seq});
  } else {
    // Not the head (an operator dead-lettering from the middle): rare, so a
    // linear search of this key's events is fine.
    auto it = std::find_if(queue.items.begin() + queue.front, queue.items.end(),
                           [seq](const Item& i) { return i.seq == seq; });
    if (it == queue.items.end()) return;
    queue.items.erase(it);
    --keyed_events_;
  }
  if (queue.empty()) by_key_.erase(key_it);
}

void QueueIndex::Reschedule(uint64_t seq, absl::string_view ordering_key,
                            int64_t old_due_ms, int64_t new_due_ms) {
  if (ordering_key.empty()) {
    if (ready_.erase({old_due_ms, seq}) > 0) ready_.insert({new_due_ms, seq});
    return;
  }
  auto key_it = by_key_.find(ordering_key);
  if (key_it == by_key_.end()) return;
  KeyQueue& queue = key_it->second;
  for (size_t i = queue.front; i < queue.items.size(); ++i) {
    Item& item = queue.items[i];
    if (item.seq != seq) continue;
    if (i == queue.front && ready_.erase({item.due_ms, seq}) > 0) {
      ready_.insert({new_due_ms, seq});
    }
    item.due_ms = new_due_ms;
    return;
  }
}

}  // namespace outbox
