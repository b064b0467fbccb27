// Copyright (c) edge-outbox authors.
//
// MetricsWriter (metrics_writer.h): what settled, counted in AgentMetrics,
// and the metrics file, replaced whole every metrics_interval.

#include "agent/telemetry/metrics_writer.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/telemetry/prometheus_text.h"
#include "platform/atomic_file.h"

namespace outbox {

MetricsWriter::MetricsWriter(Store* store, const AgentConfig* config,
                             Clock* clock, LogFn log)
    : store_(store), config_(config), clock_(clock), log_(std::move(log)) {}

bool MetricsWriter::Due(absl::Time steady) {
  if (config_->agent.metrics_file.empty()) {
    next_write_ = absl::InfiniteFuture();  // never: no wake-ups for it
    return false;
  }
  if (steady < next_write_) return false;
  next_write_ = steady + config_->agent.metrics_interval;
  return true;
}

void MetricsWriter::Count(const Settlement& s, const DeadReasons& dead,
                          absl::Time steady) {
  switch (s.kind) {
    case Settlement::Kind::kDelivered: {
      // Both wall-clock times: the commit's and now, as a receiver sees it.
      metrics_.OnDelivered(clock_->Now() - s.event.created);
      if (config_->agent.metrics_file.empty()) break;  // no ETA to show
      absl::StatusOr<const Destination*> d =
          Route(*config_, s.event.type, s.event.destination);
      if (d.ok()) drain_rate_.OnDelivered((*d)->name, 1, steady);
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

absl::flat_hash_map<std::string, uint64_t>
MetricsWriter::PendingPerDestination() {
  absl::flat_hash_map<std::string, uint64_t> pending;
  absl::StatusOr<std::vector<LanePending>> lanes = store_->PendingByLane();
  if (!lanes.ok()) return pending;  // the store closed: none to show
  for (const LanePending& lane : *lanes) {
    if (!lane.target.empty()) {  // a workflow's next request's destination
      pending[lane.target] += lane.events;
      continue;
    }
    absl::StatusOr<const Destination*> d =
        Route(*config_, lane.type, lane.destination);
    if (d.ok()) pending[(*d)->name] += lane.events;
  }
  return pending;
}

void MetricsWriter::Write(Loop loop, absl::Time steady) {
  const std::string& path = config_->agent.metrics_file;
  if (path.empty()) return;
  // GetStats reads counters, the head entry and the store's directory
  // listing: its cost does not grow with the backlog.
  absl::StatusOr<Stats> stats = store_->GetStats();
  absl::Status s = stats.status();
  if (s.ok()) {
    absl::flat_hash_map<std::string, uint64_t> pending =
        PendingPerDestination();
    for (AgentMetrics::DestinationState& d : loop.destinations) {
      d.pending = pending[d.name];
      d.per_second = drain_rate_.PerSecond(d.name, steady);
    }
    s = WriteFileAtomically(
        path, RenderPrometheusText(metrics_.Families(*stats, loop.in_flight,
                                                     loop.destinations)));
  }
  // Said once when writes start failing and once when they work again, not
  // every interval of a full disk.
  if (!s.ok() && !failing_) {
    log_(LogSeverity::kWarning, LogEvent::kMetricsFileFailed,
         absl::StrCat("metrics file not written (", s.message(),
                      "); trying again every ",
                      absl::FormatDuration(config_->agent.metrics_interval)));
  } else if (s.ok() && failing_) {
    log_(LogSeverity::kInfo, LogEvent::kMetricsFileRecovered,
         absl::StrCat("metrics file ", path, " written again"));
  }
  failing_ = !s.ok();
}

}  // namespace outbox
