// Copyright (c) edge-outbox authors.
//
// DrainRate: how fast each destination's events are being delivered now,
// and so how long its backlog would take to drain at that rate (the drain
// ETA of the metrics file and `outboxctl stats --agent-metrics`). The rate
// is the deliveries of the last `window` (a minute by default) over the
// time they took: since the destination started delivering again, if that
// is less than the window, and at least a second, so that the first
// deliveries after a reconnect give a rate at once rather than one spread
// over an idle minute. Deliveries are counted in one-second buckets, so the
// memory is at most `window` buckets per destination.
//
// REQUIRES: External synchronization (the agent's thread).

#ifndef OUTBOX_AGENT_TELEMETRY_DRAIN_RATE_H_
#define OUTBOX_AGENT_TELEMETRY_DRAIN_RATE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace outbox {

class DrainRate {
 public:
  explicit DrainRate(absl::Duration window = absl::Minutes(1))
      : window_(window) {}

  // `events` more events to `destination` delivered at `now` (a monotonic
  // clock; the calls' times never go back).
  void OnDelivered(absl::string_view destination, uint64_t events,
                   absl::Time now);

  // Events per second delivered to `destination` over the window ending at
  // `now`; 0 if none were.
  double PerSecond(absl::string_view destination, absl::Time now) const;

 private:
  struct Window {
    std::deque<std::pair<int64_t, uint64_t>> buckets;  // (second, events)
    absl::Time since;  // the first delivery after an idle window
  };
  void Expire(Window* w, absl::Time now) const;

  const absl::Duration window_;
  absl::flat_hash_map<std::string, Window> by_destination_;
};

// The time `pending` events take at `per_second`: zero when none are
// pending, absl::InfiniteDuration() when some are and nothing moves.
absl::Duration DrainEta(uint64_t pending, double per_second);

}  // namespace outbox

#endif  // OUTBOX_AGENT_TELEMETRY_DRAIN_RATE_H_
