// Copyright (c) edge-outbox authors.
//
// MetricsWriter: the loop's metrics. It holds the counts (AgentMetrics) and
// each destination's delivery rate (DrainRate), counts what the loop's
// writes settled, and replaces the metrics file whole every metrics_interval
// (agent { metrics_file }), rendered from the store's figures, its own and
// what the loop shows of itself. The loop asks Due() each round and arms its
// one timer for next_write(), so an idle agent wakes for it at most once per
// interval.
//
// Thread-safety: none; owned and used by the loop's thread alone.

#ifndef OUTBOX_AGENT_TELEMETRY_METRICS_WRITER_H_
#define OUTBOX_AGENT_TELEMETRY_METRICS_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "agent/config/config.h"
#include "agent/telemetry/agent_metrics.h"
#include "agent/telemetry/drain_rate.h"
#include "outbox/clock.h"
#include "outbox/log.h"
#include "outbox/store.h"

namespace outbox {

class MetricsWriter {
 public:
  // Receives the records about the file itself (written, failing,
  // recovered): never payloads, never secrets.
  using LogFn = std::function<void(LogSeverity, LogEvent, std::string)>;
  // Why each event of a round's write was dead-lettered, by seq.
  using DeadReasons = absl::flat_hash_map<uint64_t, AgentMetrics::DeadReason>;

  // What the loop shows of itself at a write: each configured destination
  // (its name, kind, reachability and fuse; the writer adds its pending
  // events and delivery rate) and the requests in flight.
  struct Loop {
    std::vector<AgentMetrics::DestinationState> destinations;
    size_t in_flight = 0;
  };

  // `store`, `config` and `clock` are borrowed and must outlive it.
  MetricsWriter(Store* store, const AgentConfig* config, Clock* clock,
                LogFn log);

  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;

  // The counts, for the loop to add to as things happen.
  AgentMetrics& counts() { return metrics_; }

  // Counts settlement `s` once written (at `steady`, the monotonic clock);
  // `dead` says why the ones of its round were dead-lettered.
  void Count(const Settlement& s, const DeadReasons& dead, absl::Time steady);

  // Whether a file write is due at `steady` (and, when it is, the next one
  // moves a metrics_interval on). Never, without a metrics file.
  bool Due(absl::Time steady);
  // When the next write is due (InfiniteFuture: no metrics file).
  absl::Time next_write() const { return next_write_; }

  // Writes the file now. A failure is logged (once until writes work
  // again), never returned: metrics must not stop deliveries.
  void Write(Loop loop, absl::Time steady);

 private:
  // Pending events per destination name, as the configuration routes each
  // lane (Store::PendingByLane); lanes no route takes are left out.
  absl::flat_hash_map<std::string, uint64_t> PendingPerDestination();

  Store* const store_;
  const AgentConfig* const config_;
  Clock* const clock_;
  const LogFn log_;
  AgentMetrics metrics_;
  DrainRate drain_rate_;  // deliveries per destination: the drain ETA
  absl::Time next_write_ = absl::InfinitePast();  // the monotonic clock
  bool failing_ = false;  // the last write failed (logged once)
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_TELEMETRY_METRICS_WRITER_H_
