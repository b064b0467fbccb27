// Copyright (c) edge-outbox authors.

#include "agent/dead_letter_fuse.h"

namespace outbox {

DeadLetterFuse::Verdict DeadLetterFuse::OnDeadLetters(
    absl::string_view destination, absl::string_view answer, size_t events,
    int limit) {
  if (limit <= 0) return Verdict::kDeadLetter;
  State& s = states_[destination];
  if (s.tripped) return Verdict::kHold;
  if (s.answer != answer) {
    s.answer = std::string(answer);
    s.run = 0;
  }
  const size_t max = static_cast<size_t>(limit);
  if (s.run + events > max) {
    s.tripped = true;  // these would pass the limit: held, not buried
    return Verdict::kHold;
  }
  s.run += events;
  if (s.run < max) return Verdict::kDeadLetter;
  s.tripped = true;
  return Verdict::kDeadLetterTrips;
}

bool DeadLetterFuse::OnDelivered(absl::string_view destination) {
  auto it = states_.find(destination);
  if (it == states_.end()) return false;
  const bool was = it->second.tripped;
  it->second = State();
  return was;
}

bool DeadLetterFuse::tripped(absl::string_view destination) const {
  auto it = states_.find(destination);
  return it != states_.end() && it->second.tripped;
}

}  // namespace outbox
