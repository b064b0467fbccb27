// Copyright (c) edge-outbox authors.
//
// The drain ETA that `outboxctl stats --agent-metrics FILE` prints: only the
// running agent knows how fast each destination's events go, so it is read
// from the agent's metrics file (agent { metrics_file }), as of its last
// write (every metrics_interval).

#ifndef OUTBOX_TOOLS_CTL_DRAIN_ETA_H_
#define OUTBOX_TOOLS_CTL_DRAIN_ETA_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace outbox::ctl {

// One destination's line. Plain data.
struct DrainEta {
  std::string destination;
  double pending_events = 0;     // outbox_destination_pending_events
  double events_per_second = 0;  // outbox_destination_delivery_rate
  double eta_seconds = 0;        // outbox_drain_eta_seconds; +Inf: stalled
};

// The destinations of a Prometheus text as the agent writes it, in the
// order of its outbox_drain_eta_seconds samples. Errors: kNotFound if it has
// none (not an agent's metrics file, or one from before the drain ETA),
// naming `what`.
absl::StatusOr<std::vector<DrainEta>> ParseDrainEta(absl::string_view text,
                                                    absl::string_view what);

// "3m12s at 412.5 events/s, 79123 pending"; "stalled: 12 pending, none
// delivered in the last minute"; "drained".
std::string FormatDrainEta(const DrainEta& eta);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_DRAIN_ETA_H_
