// Copyright (c) edge-outbox authors.

#include "lib/latency_histogram.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace outbox {
namespace {

constexpr double kBounds[] = {0.001, 0.01, 0.1};

TEST(LatencyHistogramTest, CountsEachDurationInTheFirstBucketAtOrAboveIt) {
  LatencyHistogram h(kBounds);
  h.Record(absl::Microseconds(500));  // (0, 1ms]
  h.Record(absl::Milliseconds(1));    // bounds are inclusive
  h.Record(absl::Milliseconds(50));   // (10ms, 100ms]
  h.Record(absl::Seconds(3));         // +Inf
  const Histogram s = h.Snapshot();
  EXPECT_EQ(s.upper_bounds, std::vector<double>(kBounds, kBounds + 3));
  EXPECT_EQ(s.counts, (std::vector<uint64_t>{2, 0, 1, 1}));
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.sum_seconds, 0.0005 + 0.001 + 0.05 + 3);
}

TEST(LatencyHistogramTest, NegativeDurationCountsAsZero) {
  LatencyHistogram h(kBounds);
  h.Record(-absl::Seconds(5));  // a clock that went back
  const Histogram s = h.Snapshot();
  EXPECT_EQ(s.counts[0], 1u);
  EXPECT_EQ(s.sum_seconds, 0);
}

TEST(LatencyHistogramTest, ConcurrentRecordsAreAllCounted) {
  LatencyHistogram h(kBounds);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h] {
      for (int i = 0; i < 10000; ++i) h.Record(absl::Milliseconds(5));
    });
  }
  for (std::thread& t : threads) t.join();
  const Histogram s = h.Snapshot();
  EXPECT_EQ(s.counts[1], 40000u);
  EXPECT_EQ(s.count, 40000u);
}

}  // namespace
}  // namespace outbox
