// Copyright (c) edge-outbox authors.
//
// The sink's deliberate misbehaviour: fixed answers a test asks for, and
// random faults drawn per request.

#ifndef OUTBOX_TOOLS_SINK_FAULT_PLAN_H_
#define OUTBOX_TOOLS_SINK_FAULT_PLAN_H_

#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "tools/sink/sink_options.h"

namespace outbox::sink {

// The status a test asked for: POST /status/NNN (200..599) answers NNN; else
// a `options.status_for_type` entry whose key equals `type_value` (the value
// of the --type-header header, or nullopt when the request has none).
std::optional<int> FixedStatus(absl::string_view path,
                               std::optional<absl::string_view> type_value,
                               const FaultOptions& options);

enum class Fault {
  kNone,      // Answer normally.
  kDrop,      // Close the connection without answering.
  kFail,      // Answer options.fail_status.
  kThrottle,  // Answer 429 with Retry-After.
};

// Draws one Fault per request with the configured rates. One uniform draw
// in [0, 1) is compared against the cumulative rates (drop, then fail, then
// throttle), so the rates are exclusive and a rate of 1 always applies.
// Thread-safe: the generator is behind a mutex.
class FaultPlanner {
 public:
  FaultPlanner(const FaultOptions& options, uint64_t seed);

  Fault Draw() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const double drop_rate_;
  const double fail_rate_;
  const double throttle_rate_;
  absl::Mutex mu_;
  absl::BitGen gen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_FAULT_PLAN_H_
