// Copyright (c) edge-outbox authors.

#include "agent/reachability.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace outbox {

Reachability::Reachability(const std::vector<std::string>& destinations,
                           absl::Duration probe_min, absl::Duration probe_max)
    : probe_min_(probe_min), probe_max_(probe_max) {
  for (const std::string& d : destinations) states_[d];
}

LaneGate Reachability::Peek(
    absl::string_view destination, absl::Time now,
    const absl::flat_hash_set<std::string>& probing) const {
  auto it = states_.find(destination);
  if (it == states_.end()) return LaneGate::kClosed;
  const State& state = it->second;
  if (state.paused) return LaneGate::kClosed;
  if (!state.Probing()) return LaneGate::kOpen;
  if (state.probe_in_flight || state.probe_at > now) return LaneGate::kClosed;
  return probing.contains(destination) ? LaneGate::kClosed : LaneGate::kOne;
}

LaneGate Reachability::Gate(absl::string_view destination, absl::Time now,
                            absl::flat_hash_set<std::string>* probing) const {
  const LaneGate g = Peek(destination, now, *probing);
  if (g == LaneGate::kOne) probing->insert(std::string(destination));
  return g;
}

bool Reachability::OnSend(absl::string_view destination) {
  State& state = states_[destination];
  if (!state.Probing()) return false;
  state.probe_in_flight = true;
  return true;
}

void Reachability::OnResult(absl::string_view destination, bool probe) {
  if (probe) states_[destination].probe_in_flight = false;
}

bool Reachability::OnAnswer(absl::string_view destination, absl::Time now) {
  State& state = states_[destination];
  const bool was_held = state.Probing();
  MarkReachable(&state, now);
  state.refused = false;
  state.probe_backoff = absl::ZeroDuration();
  return was_held;
}

bool Reachability::OnRefused(absl::string_view destination, bool probe,
                             absl::Time now) {
  State& state = states_[destination];
  MarkReachable(&state, now);  // it answered
  const bool newly = !state.refused;
  state.refused = true;
  return Backoff(&state, newly, probe, now);
}

void Reachability::MarkReachable(State* state, absl::Time now) {
  if (!state->reachable) {
    state->unreachable_before +=
        std::max(absl::ZeroDuration(), now - state->unreachable_since);
    state->unreachable_since = absl::InfiniteFuture();
  }
  state->reachable = true;
}

bool Reachability::OnNeverReached(absl::string_view destination, bool probe,
                                  absl::Time now) {
  State& state = states_[destination];
  const bool newly = state.reachable;
  if (newly) {
    state.reachable = false;
    state.unreachable_since = now;
  }
  return Backoff(&state, newly, probe, now);
}

bool Reachability::Backoff(State* state, bool newly, bool probe,
                           absl::Time now) const {
  if (newly) {
    state->probe_backoff = probe_min_;
  } else if (probe) {
    // A failed probe doubles the wait, up to the configured maximum: an
    // offline device should cost next to nothing. (At least the minimum: a
    // network change resets the backoff to probe at once, and doubling zero
    // would then probe in a loop.)
    state->probe_backoff =
        std::clamp(state->probe_backoff * 2, probe_min_, probe_max_);
  } else {
    return false;  // a request started before the first failure came back
  }
  state->probe_at = now + state->probe_backoff;
  return newly;
}

void Reachability::OnNetworkChange() {
  for (auto& [name, state] : states_) {
    if (!state.reachable) {
      state.probe_at = absl::InfinitePast();
      state.probe_backoff = absl::ZeroDuration();
    }
  }
}

void Reachability::Pause(absl::string_view destination) {
  states_[destination].paused = true;
}

absl::Status Reachability::Resume(absl::string_view destination) {
  auto it = states_.find(destination);
  if (it == states_.end()) {
    return absl::NotFoundError(
        absl::StrCat("no destination named '", destination, "'"));
  }
  it->second.paused = false;
  return absl::OkStatus();
}

absl::Time Reachability::NextProbe() const {
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [name, state] : states_) {
    if (state.Probing() && !state.probe_in_flight) {
      next = std::min(next, state.probe_at);
    }
  }
  return next;
}

bool Reachability::AllUnreachable() const {
  return !states_.empty() &&
         std::all_of(states_.begin(), states_.end(),
                     [](const auto& s) { return !s.second.reachable; });
}

Reachability::Snapshot Reachability::Of(absl::string_view destination,
                                        absl::Time now) const {
  Snapshot snapshot;
  auto it = states_.find(destination);
  if (it == states_.end()) return snapshot;
  const State& state = it->second;
  snapshot.reachable = state.reachable;
  snapshot.refused = state.refused;
  snapshot.paused = state.paused;
  snapshot.unreachable = state.unreachable_before;
  if (!state.reachable) {
    snapshot.unreachable +=
        std::max(absl::ZeroDuration(), now - state.unreachable_since);
  }
  return snapshot;
}

}  // namespace outbox
