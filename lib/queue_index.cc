// Copyright (c) edge-outbox authors.

#include "lib/queue_index.h"

#include <algorithm>

namespace outbox {

void QueueIndex::Add(uint64_t seq, absl::string_view ordering_key,
                     int64_t due_ms) {
  if (ordering_key.empty()) {
    ready_.insert({due_ms, seq});
    return;
  }
  std::deque<Item>& items = by_key_[ordering_key];
  if (items.empty()) ready_.insert({due_ms, seq});
  items.push_back(Item{seq, due_ms});
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
  std::deque<Item>& items = key_it->second;
  if (!items.empty() && items.front().seq == seq) {
    ready_.erase({items.front().due_ms, seq});
    items.pop_front();
    --keyed_events_;
    if (!items.empty())
      ready_.insert({items.front().due_ms, items.front().seq});
  } else {
    // Not the head (an operator dead-lettering from the middle): rare, so a
    // linear search of this key's events is fine.
    auto it = std::find_if(items.begin(), items.end(),
                           [seq](const Item& i) { return i.seq == seq; });
    if (it == items.end()) return;
    items.erase(it);
    --keyed_events_;
  }
  if (items.empty()) by_key_.erase(key_it);
}

void QueueIndex::Reschedule(uint64_t seq, absl::string_view ordering_key,
                            int64_t old_due_ms, int64_t new_due_ms) {
  if (ordering_key.empty()) {
    if (ready_.erase({old_due_ms, seq}) > 0) ready_.insert({new_due_ms, seq});
    return;
  }
  auto key_it = by_key_.find(ordering_key);
  if (key_it == by_key_.end()) return;
  std::deque<Item>& items = key_it->second;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].seq != seq) continue;
    if (i == 0 && ready_.erase({items[i].due_ms, seq}) > 0) {
      ready_.insert({new_due_ms, seq});
    }
    items[i].due_ms = new_due_ms;
    return;
  }
}

}  // namespace outbox
