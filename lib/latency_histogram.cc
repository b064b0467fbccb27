// Copyright (c) edge-outbox authors.

#include "lib/latency_histogram.h"

#include <algorithm>

namespace outbox {

LatencyHistogram::LatencyHistogram(absl::Span<const double> upper_bounds)
    : upper_bounds_(upper_bounds.begin(), upper_bounds.end()),
      counts_(new std::atomic<uint64_t>[upper_bounds.size() + 1]) {
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) counts_[i].store(0);
}

void LatencyHistogram::Record(absl::Duration d) {
  const double seconds = std::max(0.0, absl::ToDoubleSeconds(d));
  // Bounds are inclusive ("le"): the first bucket whose bound is >= seconds.
  const size_t bucket =
      std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), seconds) -
      upper_bounds_.begin();
  // Relaxed: each counter only has to be exact on its own; nothing is
  // ordered by them.
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(
      static_cast<uint64_t>(std::max<int64_t>(0, absl::ToInt64Nanoseconds(d))),
      std::memory_order_relaxed);
}

Histogram LatencyHistogram::Snapshot() const {
  Histogram h;
  h.upper_bounds = upper_bounds_;
  h.counts.resize(upper_bounds_.size() + 1);
  for (size_t i = 0; i < h.counts.size(); ++i) {
    h.counts[i] = counts_[i].load(std::memory_order_relaxed);
    h.count += h.counts[i];
  }
  h.sum_seconds =
      static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1e9;
  return h;
}

absl::Span<const double> CommitLatencyBuckets() {
  static constexpr double kBounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                       0.005,  0.01,    0.025,  0.05,  0.1,
                                       0.25,   0.5,     1,      2.5,   10};
  return kBounds;
}

}  // namespace outbox
