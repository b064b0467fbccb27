// Copyright (c) edge-outbox authors.
//
// LatencyHistogram: counts durations into fixed buckets with relaxed atomic
// increments and no lock, so that Store::Commit can time itself without
// adding a point of contention between committers (the commit already pays
// an fsync; two relaxed fetch_adds are noise beside it).
//
// Thread-safe: Record and Snapshot may run concurrently from any threads. A
// snapshot taken during Record calls may count an observation in its bucket
// and not yet in sum_seconds; count is always the sum of the buckets, as the
// Prometheus exposition format requires.

#ifndef OUTBOX_LIB_LATENCY_HISTOGRAM_H_
#define OUTBOX_LIB_LATENCY_HISTOGRAM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "outbox/histogram.h"

namespace outbox {

class LatencyHistogram {
 public:
  // REQUIRES: `upper_bounds` (seconds) ascending, finite.
  explicit LatencyHistogram(absl::Span<const double> upper_bounds);
  LatencyHistogram(const LatencyHistogram&) = delete;
  LatencyHistogram& operator=(const LatencyHistogram&) = delete;

  // Counts `d` (a negative one as zero).
  void Record(absl::Duration d);
  Histogram Snapshot() const;

 private:
  const std::vector<double> upper_bounds_;
  // One counter per bucket, the +Inf one last.
  const std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<uint64_t> sum_nanos_{0};
};

// Buckets for a synced commit: 100 us (no fsync) to 10 s (a stalled disk).
absl::Span<const double> CommitLatencyBuckets();

}  // namespace outbox

#endif  // OUTBOX_LIB_LATENCY_HISTOGRAM_H_
