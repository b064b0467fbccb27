// Copyright (c) edge-outbox authors.
//
// AgentMetrics: what only the running agent knows, for its metrics file:
// attempts by outcome, dead letters it made by reason, delivery latency
// (from an event's commit to its 2xx being recorded), and, passed in when
// the file is rendered, what is in flight, each destination's state and the
// commit latency of the Store object it runs on. Counters start at zero
// when the agent starts (Prometheus' rate() handles the reset).
//
// REQUIRES: External synchronization (the agent's thread).

#ifndef OUTBOX_AGENT_TELEMETRY_AGENT_METRICS_H_
#define OUTBOX_AGENT_TELEMETRY_AGENT_METRICS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/reachability.h"
#include "agent/send/sender.h"
#include "agent/telemetry/prometheus_text.h"
#include "lib/latency_histogram.h"
#include "outbox/store.h"

namespace outbox {

class AgentMetrics {
 public:
  // How an attempt (a request that reached the receiver, or may have)
  // ended. The names are the `outcome` label values, HTTP's words for
  // every kind: an MQTT PUBACK with success counts as 2xx, one refusing the
  // event as 4xx, any other as retryable_status.
  enum class Outcome {
    k2xx,              // delivered
    kRetryableStatus,  // 408, 425, 429, 5xx (or no valid status): retried
    kTimeout,          // no answer within the destination's timeout
    kConnection,       // the connection broke after the request left
    k4xx,              // 3xx or 4xx other than those: dead-lettered
    k410,              // the destination is paused
    kRefused,          // 401, 403, not authorized: held, not an attempt
  };
  static constexpr int kOutcomes = 7;

  // Why the agent dead-lettered an event; the `reason` label values.
  enum class DeadReason {
    kRejected,     // a 3xx or 4xx answer
    kGaveUp,       // max_attempts or max_age reached
    kUnsendable,   // the transport refused the request itself
    kUndecodable,  // the stored entry did not decode (quarantined)
  };
  static constexpr int kDeadReasons = 4;

  // How a workflow ended; the `end` label values.
  enum class WorkflowEnd {
    kCompleted,       // every step done or skipped
    kCompensated,     // its completed steps reverted (a failure, a cancel)
    kNeedsAttention,  // a revert failed for good
  };
  static constexpr int kWorkflowEnds = 3;

  // One destination's state when the file is written.
  struct DestinationState {
    std::string name;
    std::string kind;  // "http", "mqtt" or "kafka": the `kind` label
    Reachability::Snapshot snapshot;
    bool fuse_tripped = false;  // held by its dead-letter fuse
    uint64_t pending = 0;       // pending events routed to it
    double per_second = 0;      // delivered to it lately (DrainRate)
  };

  AgentMetrics();

  void OnAttempt(Outcome outcome) { ++attempts_[static_cast<int>(outcome)]; }
  void OnDeadLettered(DeadReason reason) {
    ++dead_lettered_[static_cast<int>(reason)];
  }
  void OnWorkflowFinished(WorkflowEnd end) {
    ++workflows_[static_cast<int>(end)];
  }
  // Whether the wall clock is trusted (ClockTrust): outbox_clock_trusted.
  void SetClockTrusted(bool trusted) { clock_trusted_ = trusted; }
  // Event types (with an explicit destination, type and destination) held
  // for want of a route: outbox_unrouted_types.
  void SetUnroutedTypes(size_t n) { unrouted_types_ = n; }
  // A delivery recorded `since_commit` after its event was committed.
  void OnDelivered(absl::Duration since_commit) {
    delivery_latency_.Record(since_commit);
  }

  // The store's families (StoreMetricFamilies), then the agent's.
  std::vector<MetricFamily> Families(
      const Stats& stats, size_t in_flight,
      const std::vector<DestinationState>& destinations) const;

 private:
  std::array<uint64_t, kOutcomes> attempts_{};
  std::array<uint64_t, kDeadReasons> dead_lettered_{};
  std::array<uint64_t, kWorkflowEnds> workflows_{};
  LatencyHistogram delivery_latency_;
  bool clock_trusted_ = true;
  size_t unrouted_types_ = 0;
};

// The outcome of the attempt `result` reports. REQUIRES: the request may
// have reached the receiver (Decide() did not call it kOffline).
AgentMetrics::Outcome AttemptOutcome(const SendResult& result);

// Why a settlement of kind kDeadLetter (an attempt's answer) gave up.
AgentMetrics::DeadReason DeadReasonOf(const Settlement& settlement);

}  // namespace outbox

#endif  // OUTBOX_AGENT_TELEMETRY_AGENT_METRICS_H_
