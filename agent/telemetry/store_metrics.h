// Copyright (c) edge-outbox authors.
//
// The metrics derived from a store (Store::GetStats), shared by outbox-
// agent's metrics file and `outboxctl stats --prometheus`, so both show the
// same names with the same values. Pure functions; thread-safe.

#ifndef OUTBOX_AGENT_TELEMETRY_STORE_METRICS_H_
#define OUTBOX_AGENT_TELEMETRY_STORE_METRICS_H_

#include <vector>

#include "agent/telemetry/prometheus_text.h"
#include "outbox/store.h"

namespace outbox {

// outbox_pending_events, outbox_pending_bytes,
// outbox_oldest_pending_age_seconds, outbox_dead_letters,
// outbox_delivered_total, outbox_dead_letters_purged_total,
// outbox_store_disk_bytes. Stats::commit_latency is not among them: it
// belongs to the process that commits (AgentMetrics shows it).
std::vector<MetricFamily> StoreMetricFamilies(const Stats& stats);

}  // namespace outbox

#endif  // OUTBOX_AGENT_TELEMETRY_STORE_METRICS_H_
