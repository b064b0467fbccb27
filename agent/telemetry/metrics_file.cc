// Copyright (c) edge-outbox authors.
//
// The agent's loop, its metrics: what settled, counted in AgentMetrics, and
// the metrics file, rendered from the store's figures and the agent's own
// and replaced whole every metrics_interval on the loop's one timer, so an
// idle agent wakes for it at most once per interval.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/agent_impl.h"
#include "agent/telemetry/prometheus_text.h"
#include "platform/atomic_file.h"

namespace outbox {
namespace {

// The `kind` label of outbox_destination_info.
const char* KindLabel(Destination::Kind kind) {
  switch (kind) {
    case Destination::Kind::kHttp:
      return "http";
    case Destination::Kind::kMqtt:
      return "mqtt";
    case Destination::Kind::kKafka:
      return "kafka";
  }
  return "http";
}

}  // namespace

void AgentImpl::WriteMetricsIfDue(absl::Time steady) {
  if (config_.agent.metrics_file.empty()) {
    next_metrics_ = absl::InfiniteFuture();  // never: no wake-ups for it
    return;
  }
  if (steady < next_metrics_) return;
  next_metrics_ = steady + config_.agent.metrics_interval;
  WriteMetrics();
}

void AgentImpl::CountInMetrics(
    const Settlement& s,
    const absl::flat_hash_map<uint64_t, AgentMetrics::DeadReason>& dead) {
  switch (s.kind) {
    case Settlement::Kind::kDelivered: {
      // Both wall-clock times: the commit's and now, as a receiver sees it.
      metrics_.OnDelivered(clock_->Now() - s.event.created);
      if (config_.agent.metrics_file.empty()) break;  // no ETA to show
      absl::StatusOr<const Destination*> d =
          Route(config_, s.event.type, s.event.destination);
      if (d.ok()) drain_rate_.OnDelivered((*d)->name, 1, Steady());
      break;
    }
    case Settlement::Kind::kAttempt:
    case Settlement::Kind::kStepDone:
      break;  // counted by outcome when the answer came
    case Settlement::Kind::kDeadLetter: {
      auto why = dead.find(s.event.seq);
      metrics_.OnDeadLettered(why != dead.end() ? why->second
                                                : DeadReasonOf(s));
      break;
    }
    case Settlement::Kind::kDeadLetterUnsent: {
      auto why = dead.find(s.event.seq);
      metrics_.OnDeadLettered(why != dead.end()
                                  ? why->second
                                  : AgentMetrics::DeadReason::kUnsendable);
      break;
    }
  }
}

absl::flat_hash_map<std::string, uint64_t> AgentImpl::PendingPerDestination() {
  absl::flat_hash_map<std::string, uint64_t> pending;
  absl::StatusOr<std::vector<LanePending>> lanes = store_->PendingByLane();
  if (!lanes.ok()) return pending;  // the store closed: none to show
  for (const LanePending& lane : *lanes) {
    if (!lane.target.empty()) {  // a workflow's next request's destination
      pending[lane.target] += lane.events;
      continue;
    }
    absl::StatusOr<const Destination*> d =
        Route(config_, lane.type, lane.destination);
    if (d.ok()) pending[(*d)->name] += lane.events;
  }
  return pending;
}

void AgentImpl::WriteMetrics() {
  const std::string& path = config_.agent.metrics_file;
  if (path.empty()) return;
  // GetStats reads counters, the head entry and the store's directory
  // listing: its cost does not grow with the backlog.
  absl::StatusOr<Stats> stats = store_->GetStats();
  absl::Status s = stats.status();
  if (s.ok()) {
    std::vector<AgentMetrics::DestinationState> destinations;
    const absl::Time steady = Steady();
    absl::flat_hash_map<std::string, uint64_t> pending =
        PendingPerDestination();
    for (const Destination& d : config_.destinations) {
      destinations.push_back({d.name, KindLabel(d.kind),
                              reachability_.Of(d.name, steady),
                              fuse_.tripped(d.name), pending[d.name],
                              drain_rate_.PerSecond(d.name, steady)});
    }
    s = WriteFileAtomically(
        path, RenderPrometheusText(
                  metrics_.Families(*stats, in_flight_.size(), destinations)));
  }
  // Said once when writes start failing and once when they work again, not
  // every interval of a full disk.
  if (!s.ok() && !metrics_failing_) {
    Log(LogSeverity::kWarning, LogEvent::kMetricsFileFailed,
        absl::StrCat("metrics file not written (", s.message(),
                     "); trying again every ",
                     absl::FormatDuration(config_.agent.metrics_interval)));
  } else if (s.ok() && metrics_failing_) {
    Log(LogSeverity::kInfo, LogEvent::kMetricsFileRecovered,
        absl::StrCat("metrics file ", path, " written again"));
  }
  metrics_failing_ = !s.ok();
}

}  // namespace outbox
