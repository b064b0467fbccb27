// Copyright (c) edge-outbox authors.
//
// The metrics file: what outbox-agent does every metrics_interval
// (Store::GetStats, the agent's families rendered as Prometheus text, the
// file replaced through a temporary file and rename), with an empty store
// and with N pending. Its cost must not grow with the backlog: GetStats
// reads counters, the head entry and the store's directory listing.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/telemetry/agent_metrics.h"
#include "agent/telemetry/prometheus_text.h"
#include "base/status_macros.h"
#include "platform/atomic_file.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_sections.h"

namespace outbox::bench {
namespace {

constexpr int kWrites = 200;

struct MetricsFigures {
  Latencies latency;
  size_t bytes = 0;  // of the file
};

// kWrites metrics writes over the store at `path`, as the agent makes them.
absl::StatusOr<MetricsFigures> MeasureMetrics(const std::string& path,
                                              const std::string& file) {
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/true));
  AgentMetrics metrics;
  const std::vector<AgentMetrics::DestinationState> destinations = {
      {"backend", "http", {}}};
  MetricsFigures f;
  for (int i = 0; i < kWrites; ++i) {
    Stopwatch one;
    OUTBOX_ASSIGN_OR_RETURN(Stats stats, store->GetStats());
    const std::string text =
        RenderPrometheusText(metrics.Families(stats, 0, destinations));
    OUTBOX_RETURN_IF_ERROR(WriteFileAtomically(file, text));
    f.latency.Add(one.Elapsed());
    f.bytes = text.size();
  }
  OUTBOX_RETURN_IF_ERROR(store->Close());
  return f;
}

}  // namespace

absl::Status RunMetricsRows(const Scale& scale, const std::string& dir,
                            Table* table) {
  const std::string file = dir + "/outbox.prom";
  OUTBOX_ASSIGN_OR_RETURN(MetricsFigures empty,
                          MeasureMetrics(dir + "/metrics-empty", file));
  OUTBOX_ASSIGN_OR_RETURN(std::string pending, PendingStore(dir, scale.events));
  OUTBOX_ASSIGN_OR_RETURN(MetricsFigures full, MeasureMetrics(pending, file));
  auto detail = [](MetricsFigures& f) {
    return absl::StrFormat("p50 of %d writes, p99 %s us; %d B file", kWrites,
                           FormatFigure(f.latency.Percentile(99)), f.bytes);
  };
  table->Add(Row{"metrics.empty",
                 "metrics file (GetStats + render + write), empty store",
                 empty.latency.Percentile(50),
                 "us",
                 detail(empty),
                 {}});
  table->Add(Row{"metrics.full",
                 absl::StrCat("metrics file (GetStats + render + write), ",
                              scale.events, " pending"),
                 full.latency.Percentile(50),
                 "us",
                 detail(full),
                 {Vs("metrics.empty")}});
  return absl::OkStatus();
}

}  // namespace outbox::bench
