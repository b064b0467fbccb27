// Copyright (c) edge-outbox authors.

#include "lib/queue_index.h"

#include <algorithm>
#include <cstdint>
#include <queue>

#include "absl/strings/str_cat.h"

namespace outbox {

void QueueIndex::KeyQueue::PopFront() {
  ++front;
  // Drop the consumed prefix once it is half the vector: O(1) amortized.
  if (front * 2 >= seqs.size()) {
    seqs.erase(seqs.begin(), seqs.begin() + front);
    front = 0;
  }
}

uint32_t QueueIndex::LaneOf(absl::string_view destination,
                            absl::string_view type, absl::string_view target) {
  // Events come in runs of one lane (a backlog of one type): the last
  // answer usually fits, without building the map's key.
  if (last_lane_ < lanes_.size()) {
    const LaneInfo& last = lanes_[last_lane_].info;
    if (last.destination == destination && last.type == type &&
        last.target == target) {
      return last_lane_;
    }
  }
  // Length-prefixed: names are caller bytes and may hold any separator.
  const std::string key = absl::StrCat(destination.size(), ":", destination,
                                       type.size(), ":", type, target);
  auto [it, inserted] = lane_ids_.try_emplace(key, lanes_.size());
  if (inserted) {
    LaneInfo info{std::string(destination), std::string(type),
                  std::string(target)};
    if (classes_ != nullptr) {
      info.cls = classes_->Classify(type);
      info.priority = classes_->Priority(info.cls);
    }
    lanes_.push_back(Lane{std::move(info), {}});
  }
  last_lane_ = it->second;
  return it->second;
}

void QueueIndex::Add(uint64_t seq, absl::string_view ordering_key,
                     uint32_t lane, int64_t due, uint32_t bytes,
                     int64_t added_at) {
  const Slot slot{due, lane, bytes};
  // Seqs are added in ascending order but for replays: at the end, no search.
  if (seqs_.empty() || seqs_.rbegin()->first < seq) {
    seqs_.emplace_hint(seqs_.end(), seq, slot);
  } else {
    seqs_.emplace(seq, slot);
  }
  Count(seq, slot, +1, added_at);
  ++lanes_[lane].pending;
  if (ordering_key.empty()) {
    MakeReady(seq, slot);
    return;
  }
  KeyQueue& queue = by_key_[ordering_key];
  if (queue.empty()) MakeReady(seq, slot);
  queue.seqs.push_back(seq);
  ++keyed_events_;
}

void QueueIndex::Remove(uint64_t seq, absl::string_view ordering_key) {
  auto slot_it = seqs_.find(seq);
  if (slot_it == seqs_.end() || slot_it->second.lane == kNoLane) return;
  const Slot slot = slot_it->second;
  seqs_.erase(slot_it);
  Count(seq, slot, -1, 0);
  --lanes_[slot.lane].pending;
  if (ordering_key.empty()) {
    UnmakeReady(seq, slot);
    return;
  }
  auto key_it = by_key_.find(ordering_key);
  if (key_it == by_key_.end()) return;
  KeyQueue& queue = key_it->second;
  if (!queue.empty() && queue.head() == seq) {
    UnmakeReady(seq, slot);
    queue.PopFront();
    --keyed_events_;
    if (!queue.empty()) {
      const uint64_t next = queue.head();
      MakeReady(next, seqs_.at(next));
    }
  } else {
    // Not the head (an operator dead-lettering from the middle): rare, so a
    // linear search of this key's events is fine.
    auto it =
        std::find(queue.seqs.begin() + queue.front, queue.seqs.end(), seq);
    if (it == queue.seqs.end()) return;
    queue.seqs.erase(it);
    --keyed_events_;
  }
  if (queue.empty()) by_key_.erase(key_it);
}

std::vector<uint64_t> QueueIndex::Followers(absl::string_view ordering_key,
                                            uint64_t head, size_t limit) const {
  std::vector<uint64_t> out;
  if (ordering_key.empty()) return out;
  auto it = by_key_.find(ordering_key);
  if (it == by_key_.end() || it->second.empty() || it->second.head() != head) {
    return out;
  }
  const KeyQueue& q = it->second;
  const size_t end = std::min(q.seqs.size(), q.front + 1 + limit);
  out.assign(q.seqs.begin() + q.front + 1, q.seqs.begin() + end);
  return out;
}

bool QueueIndex::IsReady(uint64_t seq, absl::string_view ordering_key) const {
  if (ordering_key.empty()) return true;
  auto key_it = by_key_.find(ordering_key);
  return key_it != by_key_.end() && !key_it->second.empty() &&
         key_it->second.head() == seq;
}

void QueueIndex::Reschedule(uint64_t seq, absl::string_view ordering_key,
                            int64_t due, uint32_t bytes) {
  auto slot_it = seqs_.find(seq);
  if (slot_it == seqs_.end() || slot_it->second.lane == kNoLane) return;
  Slot& slot = slot_it->second;
  const bool ready = IsReady(seq, ordering_key);
  if (ready) UnmakeReady(seq, slot);
  slot.due = due;
  ClassTally& t = tallies_[lanes_[slot.lane].info.cls];
  t.bytes = t.bytes - slot.bytes + bytes;
  slot.bytes = bytes;
  if (ready) MakeReady(seq, slot);
}

void QueueIndex::Relane(uint64_t seq, uint32_t lane) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end() || it->second.lane == kNoLane ||
      it->second.lane == lane) {
    return;
  }
  Slot& slot = it->second;
  // Ready here only if it was ready there: the key's order is untouched.
  const bool ready = lanes_[slot.lane].ready.erase({slot.due, seq}) > 0;
  --lanes_[slot.lane].pending;
  ++lanes_[lane].pending;
  slot.lane = lane;
  if (ready) MakeReady(seq, slot);
}

const QueueIndex::Slot* QueueIndex::Find(uint64_t seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() || it->second.lane == kNoLane ? nullptr
                                                         : &it->second;
}

int64_t QueueIndex::DueOf(uint64_t seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? std::numeric_limits<int64_t>::max()
                           : it->second.due;
}

void QueueIndex::AddUndecodable(uint64_t seq, absl::Status why) {
  seqs_.emplace(seq, Slot{std::numeric_limits<int64_t>::max(), kNoLane, 0});
  undecodable_[seq] = std::move(why);
}

void QueueIndex::RemoveUndecodable(uint64_t seq) {
  if (undecodable_.erase(seq) > 0) seqs_.erase(seq);
}

void QueueIndex::Count(uint64_t seq, const Slot& slot, int64_t sign,
                       int64_t added_at) {
  const uint16_t cls = lanes_[slot.lane].info.cls;
  if (tallies_.size() <= cls) tallies_.resize(cls + 1);
  ClassTally& t = tallies_[cls];
  const bool ordered = classes_ != nullptr && classes_->NeedsOrder(cls);
  if (sign > 0) {
    ++t.count;
    t.bytes += slot.bytes;
    if (ordered) t.seqs.emplace(seq, added_at);
  } else {
    --t.count;
    t.bytes -= slot.bytes;
    if (ordered) t.seqs.erase(seq);
  }
}

const QueueIndex::ClassTally& QueueIndex::tally(uint16_t cls) const {
  static const ClassTally* const kEmpty = new ClassTally;
  return cls < tallies_.size() ? tallies_[cls] : *kEmpty;
}

size_t QueueIndex::ready_count() const {
  size_t n = 0;
  for (const Lane& l : lanes_) n += l.ready.size();
  return n;
}

QueueIndex::Picked QueueIndex::PickDue(
    int64_t now, size_t limit, absl::FunctionRef<LaneGate(uint32_t)> gate,
    absl::FunctionRef<bool(uint64_t)> skip) const {
  struct Cursor {
    Ready::const_iterator it, end;
    size_t budget;  // events this lane may still give
    int priority;
  };
  // A due event of a higher priority goes first; then (due, seq). The heap
  // pops what is not later than every other.
  auto later = [](const Cursor& a, const Cursor& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    return *b.it < *a.it;
  };
  std::priority_queue<Cursor, std::vector<Cursor>, decltype(later)> heap(later);
  Picked picked;
  for (uint32_t id = 0; id < lanes_.size(); ++id) {
    const Ready& ready = lanes_[id].ready;
    if (ready.empty()) continue;
    if (ready.begin()->first > now) {
      picked.next_due = std::min(picked.next_due, ready.begin()->first);
      continue;
    }
    const LaneGate g = gate(id);
    if (g == LaneGate::kClosed) continue;
    heap.push(Cursor{ready.begin(), ready.end(),
                     g == LaneGate::kOne ? size_t{1} : SIZE_MAX,
                     lanes_[id].info.priority});
  }
  while (!heap.empty() && picked.seqs.size() < limit) {
    Cursor c = heap.top();
    heap.pop();
    const auto [due, seq] = *c.it;
    if (due > now) {
      picked.next_due = std::min(picked.next_due, due);
      continue;  // the rest of this lane is later still
    }
    if (!skip(seq)) {
      picked.seqs.push_back(seq);
      --c.budget;
    }
    if (c.budget > 0 && ++c.it != c.end) heap.push(c);
  }
  if (picked.seqs.size() >= limit && !heap.empty()) picked.next_due = now;
  return picked;
}

}  // namespace outbox
