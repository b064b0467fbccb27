// Copyright (c) edge-outbox authors.

#include "agent/telemetry/store_metrics.h"

#include <string>
#include <utility>

namespace outbox {
namespace {

MetricFamily ClassFamily(std::string name, std::string help, const Stats& stats,
                         uint64_t Stats::ClassPending::*field) {
  MetricFamily family =
      Family(std::move(name), MetricFamily::Type::kGauge, std::move(help));
  for (const Stats::ClassPending& c : stats.classes) {
    family.samples.push_back(
        {"", {{"class", c.name}}, static_cast<double>(c.*field)});
  }
  return family;
}

}  // namespace

std::vector<MetricFamily> StoreMetricFamilies(const Stats& stats) {
  using Type = MetricFamily::Type;
  auto n = [](uint64_t v) { return static_cast<double>(v); };
  return {
      Family("outbox_pending_events", Type::kGauge,
             "Events committed and not yet delivered or dead-lettered.",
             n(stats.pending_events)),
      Family("outbox_pending_bytes", Type::kGauge,
             "Stored size of the pending events, in bytes.",
             n(stats.pending_bytes)),
      Family("outbox_oldest_pending_age_seconds", Type::kGauge,
             "Age of the oldest pending event (0 when none is pending).",
             absl::ToDoubleSeconds(stats.oldest_pending_age)),
      Family("outbox_dead_letters", Type::kGauge,
             "Dead letters in the store now.", n(stats.dead_letters)),
      Family("outbox_delivered_total", Type::kCounter,
             "Events delivered (answered 2xx) since the store was created.",
             n(stats.delivered_total)),
      Family("outbox_dead_letters_purged_total", Type::kCounter,
             "Dead letters deleted (retention or purge-dead) since the store "
             "was created.",
             n(stats.dead_letters_purged)),
      Family("outbox_workflows_needing_attention", Type::kGauge,
             "Workflows stopped by a revert that failed for good, waiting "
             "for an operator (outboxctl retry-step).",
             n(stats.workflows_needing_attention)),
      Family("outbox_store_disk_bytes", Type::kGauge,
             "Size of the files in the store's directory, in bytes.",
             n(stats.disk_bytes)),
      Family("outbox_events_evicted_total", Type::kCounter,
             "Events evicted to make room in their class (on_full: "
             "drop_oldest) since the store was created.",
             n(stats.evicted_total)),
      Family("outbox_events_evicted_deleted_total", Type::kCounter,
             "Of the evicted events, those deleted without a dead letter "
             "(keep_evicted: false).",
             n(stats.evicted_deleted_total)),
      Family("outbox_events_expired_total", Type::kCounter,
             "Events moved to the dead letters by their class's "
             "expire_after since the store was created.",
             n(stats.expired_total)),
      ClassFamily("outbox_class_pending_events",
                  "Pending events of each event class.", stats,
                  &Stats::ClassPending::events),
      ClassFamily("outbox_class_pending_bytes",
                  "Stored size of each event class's pending events.", stats,
                  &Stats::ClassPending::bytes),
  };
}

}  // namespace outbox
