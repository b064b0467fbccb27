// Copyright (c) edge-outbox authors.

#include "agent/telemetry/agent_metrics.h"

#include <limits>

#include "agent/retry/retry_policy.h"
#include "agent/telemetry/drain_rate.h"
#include "agent/telemetry/store_metrics.h"

namespace outbox {
namespace {

using Type = MetricFamily::Type;

constexpr const char* kOutcomeNames[AgentMetrics::kOutcomes] = {
    "2xx", "retryable_status", "timeout", "connection", "4xx",
    "410", "refused"};
constexpr const char* kDeadReasonNames[AgentMetrics::kDeadReasons] = {
    "rejected", "gave_up", "unsendable", "undecodable"};
constexpr const char* kWorkflowEndNames[AgentMetrics::kWorkflowEnds] = {
    "completed", "compensated", "needs_attention"};

// From a quick receiver on the LAN to a device offline for a day.
constexpr double kDeliveryLatencyBuckets[] = {
    0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400};

template <size_t N>
MetricFamily Labelled(const char* name, const char* help, const char* label,
                      const char* const (&values)[N],
                      const std::array<uint64_t, N>& counts) {
  MetricFamily f = Family(name, Type::kCounter, help);
  for (size_t i = 0; i < N; ++i) {
    f.samples.push_back(
        MetricSample{"", {{label, values[i]}}, static_cast<double>(counts[i])});
  }
  return f;
}

void AddDestinations(const std::vector<AgentMetrics::DestinationState>& ds,
                     std::vector<MetricFamily>* out) {
  MetricFamily info = Family("outbox_destination_info", Type::kGauge,
                             "1 per configured destination; `kind` says how "
                             "it is sent to: http (webhooks) or mqtt.");
  MetricFamily reachable =
      Family("outbox_destination_reachable", Type::kGauge,
             "1 if the destination's receiver answered the last request "
             "(any answer), 0 while it is unreachable.");
  MetricFamily paused = Family("outbox_destination_paused", Type::kGauge,
                               "1 while the destination is paused by an "
                               "HTTP 410, until resumed or restarted.");
  MetricFamily refused = Family(
      "outbox_destination_refused", Type::kGauge,
      "1 while the destination refuses this device (HTTP 401 or 403, not "
      "authorized) and its events are held, until another answer.");
  MetricFamily fuse = Family(
      "outbox_dead_letter_fuse_tripped", Type::kGauge,
      "1 while the destination is held by its dead-letter fuse: its receiver "
      "dead-lettered dead_letter_fuse events in a row with one answer, and "
      "its events wait (outbox_destination_refused is 1 too), until a "
      "delivery.");
  MetricFamily unreachable =
      Family("outbox_destination_unreachable_seconds_total", Type::kCounter,
             "Time the destination was unreachable since the agent started.");
  for (const AgentMetrics::DestinationState& d : ds) {
    const MetricLabels labels = {{"destination", d.name}};
    info.samples.push_back(
        {"", {{"destination", d.name}, {"kind", d.kind}}, 1});
    reachable.samples.push_back({"", labels, d.snapshot.reachable ? 1.0 : 0.0});
    paused.samples.push_back({"", labels, d.snapshot.paused ? 1.0 : 0.0});
    refused.samples.push_back({"", labels, d.snapshot.refused ? 1.0 : 0.0});
    fuse.samples.push_back({"", labels, d.fuse_tripped ? 1.0 : 0.0});
    unreachable.samples.push_back(
        {"", labels, absl::ToDoubleSeconds(d.snapshot.unreachable)});
  }
  out->push_back(std::move(info));
  out->push_back(std::move(reachable));
  out->push_back(std::move(paused));
  out->push_back(std::move(refused));
  out->push_back(std::move(fuse));
  out->push_back(std::move(unreachable));
}

// Each destination's backlog, its delivery rate and the time the backlog
// would take at that rate (DrainEta: +Inf while events wait and none move).
void AddDrainEta(const std::vector<AgentMetrics::DestinationState>& ds,
                 std::vector<MetricFamily>* out) {
  MetricFamily pending =
      Family("outbox_destination_pending_events", Type::kGauge,
             "Pending events the configuration routes to the destination.");
  MetricFamily rate = Family(
      "outbox_destination_delivery_rate", Type::kGauge,
      "Events per second delivered to the destination over the last minute "
      "(or since it started delivering again, if that is less).");
  MetricFamily eta = Family(
      "outbox_drain_eta_seconds", Type::kGauge,
      "Estimated time to deliver the destination's pending events at its "
      "delivery rate: 0 when none are pending, +Inf while none move.");
  for (const AgentMetrics::DestinationState& d : ds) {
    const MetricLabels labels = {{"destination", d.name}};
    pending.samples.push_back({"", labels, static_cast<double>(d.pending)});
    rate.samples.push_back({"", labels, d.per_second});
    const absl::Duration left = DrainEta(d.pending, d.per_second);
    eta.samples.push_back({"", labels,
                           left == absl::InfiniteDuration()
                               ? std::numeric_limits<double>::infinity()
                               : absl::ToDoubleSeconds(left)});
  }
  out->push_back(std::move(pending));
  out->push_back(std::move(rate));
  out->push_back(std::move(eta));
}

}  // namespace

AgentMetrics::AgentMetrics() : delivery_latency_(kDeliveryLatencyBuckets) {}

std::vector<MetricFamily> AgentMetrics::Families(
    const Stats& stats, size_t in_flight,
    const std::vector<DestinationState>& destinations) const {
  std::vector<MetricFamily> out = StoreMetricFamilies(stats);
  out.push_back(Family("outbox_in_flight_requests", Type::kGauge,
                       "Requests sent and not answered yet.",
                       static_cast<double>(in_flight)));
  out.push_back(Labelled("outbox_attempts_total",
                         "Delivery attempts since the agent started, by "
                         "outcome. Requests that never reached the receiver "
                         "are not attempts.",
                         "outcome", kOutcomeNames, attempts_));
  out.push_back(Labelled("outbox_dead_lettered_total",
                         "Events this agent moved to the dead letters since "
                         "it started, by reason.",
                         "reason", kDeadReasonNames, dead_lettered_));
  out.push_back(Labelled("outbox_workflows_finished_total",
                         "Workflows this agent finished since it started, by "
                         "how they ended; needs_attention ones wait for an "
                         "operator (outboxctl retry-step).",
                         "end", kWorkflowEndNames, workflows_));
  out.push_back(Family(
      "outbox_clock_trusted", Type::kGauge,
      "1 while the wall clock can be put on requests; 0 while it is behind "
      "the newest time the store has seen by more than clock_tolerance (or "
      "unsynchronized, with require_synchronized_clock): HTTP and Kafka "
      "destinations then hold their events.",
      clock_trusted_ ? 1.0 : 0.0));
  out.push_back(Family(
      "outbox_unrouted_types", Type::kGauge,
      "Event types whose events no route of the configuration takes (or "
      "that name a destination it lacks): held, not dead-lettered, until a "
      "reload or restart brings a route.",
      static_cast<double>(unrouted_types_)));
  AddDestinations(destinations, &out);
  AddDrainEta(destinations, &out);
  MetricFamily commit = Family(
      "outbox_commit_duration_seconds", Type::kHistogram,
      "Store::Commit latency, fsync included, of the commits made in this "
      "process (none in a standalone outbox-agent).");
  AddHistogram(stats.commit_latency, {}, &commit);
  out.push_back(std::move(commit));
  MetricFamily delivery =
      Family("outbox_delivery_latency_seconds", Type::kHistogram,
             "From an event's commit to its 2xx being recorded, for the "
             "events this agent delivered since it started.");
  AddHistogram(delivery_latency_.Snapshot(), {}, &delivery);
  out.push_back(std::move(delivery));
  return out;
}

AgentMetrics::Outcome AttemptOutcome(const SendResult& result) {
  if (!result.transport.ok()) {
    return absl::IsDeadlineExceeded(result.transport)
               ? AgentMetrics::Outcome::kTimeout
               : AgentMetrics::Outcome::kConnection;
  }
  switch (result.outcome) {
    case DeliveryOutcome::kDelivered:
      return AgentMetrics::Outcome::k2xx;
    case DeliveryOutcome::kDeadLetter:
      return AgentMetrics::Outcome::k4xx;
    case DeliveryOutcome::kPauseDestination:
      return AgentMetrics::Outcome::k410;
    case DeliveryOutcome::kHoldDestination:
      return AgentMetrics::Outcome::kRefused;
    case DeliveryOutcome::kRetry:
      break;
  }
  return AgentMetrics::Outcome::kRetryableStatus;
}

AgentMetrics::DeadReason DeadReasonOf(const Settlement& settlement) {
  // A rejecting status dead-letters at once; any other last attempt was a
  // retry that ran out of attempts or age.
  return Classify(settlement.attempt.http_status) ==
                 DeliveryOutcome::kDeadLetter
             ? AgentMetrics::DeadReason::kRejected
             : AgentMetrics::DeadReason::kGaveUp;
}

}  // namespace outbox
