// Copyright (c) edge-outbox authors.
//
// Histogram: a snapshot of a latency distribution in fixed buckets, as
// Store::GetStats (commit latency) and the agent's metrics file (delivery
// latency) report it. Plain data.

#ifndef OUTBOX_LIB_INCLUDE_OUTBOX_HISTOGRAM_H_
#define OUTBOX_LIB_INCLUDE_OUTBOX_HISTOGRAM_H_

#include <cstdint>
#include <vector>

namespace outbox {

struct Histogram {
  // Inclusive upper bounds of the finite buckets, in seconds, ascending. A
  // last bucket without a bound (+Inf) follows them.
  std::vector<double> upper_bounds;
  // Observations per bucket, NOT cumulative: counts[i] holds those in
  // (upper_bounds[i-1], upper_bounds[i]]; counts.back() those above the last
  // bound. counts.size() == upper_bounds.size() + 1.
  std::vector<uint64_t> counts;
  double sum_seconds = 0;  // of every observation
  uint64_t count = 0;      // the sum of counts
};

}  // namespace outbox

#endif  // OUTBOX_LIB_INCLUDE_OUTBOX_HISTOGRAM_H_
