// Copyright (c) edge-outbox authors.
//
// Reachability: what the agent knows about each destination's receiver, and
// so what may be sent to it now.
//
// A request that never reached its receiver (DNS, refused, unreachable,
// connect timeout, a TLS failure) is not an attempt: the event stays as it
// was, and the destination is marked unreachable. Its events then wait,
// except one probe at a time on a backoff timer (probe_interval_min doubling
// to probe_interval_max), or at once when the network changes. The first
// answer of any kind makes it reachable again. An answer that refuses the
// device rather than the event (HTTP 401 or 403, an MQTT or Kafka
// authorization error) holds the destination the same way: its events wait,
// one probe at a time on the same backoff, until an answer of another kind.
// An HTTP 410 pauses a destination until it is resumed. All times are on the
// agent's monotonic clock.
//
// REQUIRES: External synchronization (the agent's one thread).

#ifndef OUTBOX_AGENT_REACHABILITY_H_
#define OUTBOX_AGENT_REACHABILITY_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "outbox/store.h"

namespace outbox {

class Reachability {
 public:
  // `destinations` names every destination; probes back off from
  // `probe_min` to `probe_max`.
  Reachability(const std::vector<std::string>& destinations,
               absl::Duration probe_min, absl::Duration probe_max);

  // How much of a lane routed to `destination` NextDue may take at `now`:
  // everything when reachable, nothing when paused or waiting to probe, one
  // event for the first lane of an unreachable destination due for a probe.
  // `probing` collects the destinations given their probe this round.
  LaneGate Gate(absl::string_view destination, absl::Time now,
                absl::flat_hash_set<std::string>* probing) const;

  // What Gate would say, without giving the probe to anyone: kOne when a
  // probe is due that `probing` does not hold yet.
  LaneGate Peek(absl::string_view destination, absl::Time now,
                const absl::flat_hash_set<std::string>& probing) const;
  // Whether `destination` is tracked (named at construction, or Add).
  bool Knows(absl::string_view destination) const {
    return states_.contains(destination);
  }

  // Tracks `destination` too (a destination of a stored workflow
  // definition that the configuration no longer has); no-op if known.
  void Add(absl::string_view destination) {
    states_.try_emplace(std::string(destination));
  }

  // A request to `destination` started; true if it is a probe (the
  // destination is unreachable), which then holds the destination's turn
  // until it comes back.
  bool OnSend(absl::string_view destination);
  // Its result came back; `probe` as OnSend said.
  void OnResult(absl::string_view destination, bool probe);

  // The receiver answered at `now` with anything but a refusal. Returns true
  // if it had been unreachable or refusing (worth a log line).
  bool OnAnswer(absl::string_view destination, absl::Time now);
  // The receiver refused the device at `now` (Decision::kHoldDestination).
  // Returns true if this made it refusing (worth a log line).
  bool OnRefused(absl::string_view destination, bool probe, absl::Time now);
  // The request never reached the receiver at `now`. Returns true if this
  // made the destination unreachable (worth a log line).
  bool OnNeverReached(absl::string_view destination, bool probe,
                      absl::Time now);
  // The network changed: probe every unreachable destination at once.
  void OnNetworkChange();

  void Pause(absl::string_view destination);
  // Errors: kNotFound for an unknown destination.
  absl::Status Resume(absl::string_view destination);

  // The earliest time a probe is due; InfiniteFuture() if none.
  absl::Time NextProbe() const;
  // True when there are destinations and none is reachable.
  bool AllUnreachable() const;

  // What the metrics file shows of one destination at `now`.
  struct Snapshot {
    bool reachable = true;
    bool refused = false;  // holding its events after a refusal
    bool paused = false;
    // Time spent unreachable since the agent started, the current spell
    // included.
    absl::Duration unreachable = absl::ZeroDuration();
  };
  // REQUIRES: `destination` was named at construction.
  Snapshot Of(absl::string_view destination, absl::Time now) const;

 private:
  struct State {
    bool paused = false;  // HTTP 410 until Resume
    bool reachable = true;
    bool refused = false;  // a 401/403 until another kind of answer
    bool probe_in_flight = false;
    absl::Time probe_at = absl::InfinitePast();
    absl::Duration probe_backoff = absl::ZeroDuration();
    // Since when it is unreachable, and the spells before this one.
    absl::Time unreachable_since = absl::InfiniteFuture();
    absl::Duration unreachable_before = absl::ZeroDuration();
    // Whether its events wait for a probe.
    bool Probing() const { return !reachable || refused; }
  };
  // Ends an unreachable spell at `now`, if one is running.
  static void MarkReachable(State* state, absl::Time now);
  // After a failure (`newly` the first of its spell, or a `probe`'s),
  // schedules the next probe; returns `newly`. A failure of a request sent
  // before the spell began changes nothing.
  bool Backoff(State* state, bool newly, bool probe, absl::Time now) const;
  const absl::Duration probe_min_, probe_max_;
  absl::flat_hash_map<std::string, State> states_;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_REACHABILITY_H_
