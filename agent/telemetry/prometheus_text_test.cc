// Copyright (c) edge-outbox authors.

#include "agent/telemetry/prometheus_text.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace outbox {
namespace {

using Type = MetricFamily::Type;

TEST(PrometheusTextTest, FamilyHasHelpThenTypeThenItsSamples) {
  const std::vector<MetricFamily> families = {
      Family("outbox_pending_events", Type::kGauge, "Events pending.", 3),
      Family("outbox_delivered_total", Type::kCounter, "Delivered.", 12)};
  EXPECT_EQ(RenderPrometheusText(families),
            "# HELP outbox_pending_events Events pending.\n"
            "# TYPE outbox_pending_events gauge\n"
            "outbox_pending_events 3\n"
            "# HELP outbox_delivered_total Delivered.\n"
            "# TYPE outbox_delivered_total counter\n"
            "outbox_delivered_total 12\n");
}

TEST(PrometheusTextTest, LabelsAreWrittenInOrder) {
  MetricFamily f = Family("outbox_attempts_total", Type::kCounter, "A.");
  f.samples.push_back(MetricSample{"", {{"outcome", "2xx"}, {"x", "y"}}, 5});
  EXPECT_EQ(RenderPrometheusText({f}),
            "# HELP outbox_attempts_total A.\n"
            "# TYPE outbox_attempts_total counter\n"
            "outbox_attempts_total{outcome=\"2xx\",x=\"y\"} 5\n");
}

TEST(PrometheusTextTest, LabelValuesEscapeBackslashQuoteAndLineFeed) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd\te"), "a\\\\b\\\"c\\nd\te");
  MetricFamily f = Family("m", Type::kGauge, "h");
  f.samples.push_back(MetricSample{"", {{"destination", "x\"}\n"}}, 1});
  EXPECT_EQ(RenderPrometheusText({f}),
            "# HELP m h\n# TYPE m gauge\nm{destination=\"x\\\"}\\n\"} 1\n");
}

TEST(PrometheusTextTest, HelpEscapesBackslashAndLineFeedOnly) {
  EXPECT_EQ(RenderPrometheusText({Family("m", Type::kGauge, "a\\b\n\"c\"")}),
            "# HELP m a\\\\b\\n\"c\"\n# TYPE m gauge\n");
}

TEST(PrometheusTextTest, HistogramBucketsAreCumulativeEndingWithInfSumCount) {
  Histogram h;
  h.upper_bounds = {0.01, 0.1, 1};
  h.counts = {2, 0, 3, 1};  // per bucket; the last one above 1 s
  h.count = 6;
  h.sum_seconds = 4.5;
  MetricFamily f = Family("outbox_commit_duration_seconds", Type::kHistogram,
                          "Commit latency.");
  AddHistogram(h, {}, &f);
  EXPECT_EQ(RenderPrometheusText({f}),
            "# HELP outbox_commit_duration_seconds Commit latency.\n"
            "# TYPE outbox_commit_duration_seconds histogram\n"
            "outbox_commit_duration_seconds_bucket{le=\"0.01\"} 2\n"
            "outbox_commit_duration_seconds_bucket{le=\"0.1\"} 2\n"
            "outbox_commit_duration_seconds_bucket{le=\"1\"} 5\n"
            "outbox_commit_duration_seconds_bucket{le=\"+Inf\"} 6\n"
            "outbox_commit_duration_seconds_sum 4.5\n"
            "outbox_commit_duration_seconds_count 6\n");
}

TEST(PrometheusTextTest, HistogramLabelsComeBeforeLe) {
  Histogram h;
  h.upper_bounds = {1};
  h.counts = {1, 0};
  h.count = 1;
  MetricFamily f = Family("h_seconds", Type::kHistogram, "h");
  AddHistogram(h, {{"destination", "d"}}, &f);
  ASSERT_EQ(f.samples.size(), 4u);
  EXPECT_EQ(f.samples[0].labels,
            (MetricLabels{{"destination", "d"}, {"le", "1"}}));
  EXPECT_EQ(f.samples[3].suffix, "_count");
  EXPECT_EQ(f.samples[3].labels, (MetricLabels{{"destination", "d"}}));
}

TEST(PrometheusTextTest, ValuesAreExactAndSpecialValuesSpelledOut) {
  EXPECT_EQ(FormatSampleValue(0), "0");
  EXPECT_EQ(FormatSampleValue(1234567890123), "1234567890123");
  EXPECT_EQ(FormatSampleValue(-2), "-2");
  EXPECT_EQ(FormatSampleValue(0.1), "0.1");
  EXPECT_EQ(FormatSampleValue(0.00025), "0.00025");
  EXPECT_EQ(FormatSampleValue(0.0001), "0.0001");
  EXPECT_EQ(FormatSampleValue(1.5e-9), "1.5e-09");
  EXPECT_EQ(FormatSampleValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatSampleValue(-std::numeric_limits<double>::infinity()),
            "-Inf");
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
}

}  // namespace
}  // namespace outbox
