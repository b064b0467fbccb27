// Copyright (c) edge-outbox authors.
//
// The Prometheus text exposition format (version 0.0.4), rendered by hand:
// Debian 12 packages no C++ Prometheus client (prometheus-cpp is not in it),
// and the format is a few lines: per family "# HELP", "# TYPE", then one
// line per sample, label values escaped (backslash, double quote, line
// feed), histograms as cumulative "_bucket" samples ending in le="+Inf",
// then "_sum" and "_count". Plain data and pure functions; thread-safe.

#ifndef OUTBOX_AGENT_TELEMETRY_PROMETHEUS_TEXT_H_
#define OUTBOX_AGENT_TELEMETRY_PROMETHEUS_TEXT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "outbox/histogram.h"

namespace outbox {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

struct MetricSample {
  std::string suffix;  // "" or, for histograms, "_bucket", "_sum", "_count"
  MetricLabels labels;
  double value = 0;
};

// One metric family: a name (with its unit and "_total" for counters, per
// the Prometheus naming conventions), its HELP text, its type, its samples.
struct MetricFamily {
  enum class Type { kCounter, kGauge, kHistogram };
  std::string name;
  std::string help;
  Type type = Type::kGauge;
  std::vector<MetricSample> samples;
};

// A family of one type; `value`, when given, is its one unlabelled sample.
MetricFamily Family(std::string name, MetricFamily::Type type,
                    std::string help);
MetricFamily Family(std::string name, MetricFamily::Type type, std::string help,
                    double value);

// Appends `histogram`'s samples with `labels` to `family` (a kHistogram):
// cumulative buckets, then le="+Inf" (= _count), _sum and _count.
void AddHistogram(const Histogram& histogram, const MetricLabels& labels,
                  MetricFamily* family);

// The exposition text of `families`, in order.
std::string RenderPrometheusText(absl::Span<const MetricFamily> families);

// A label value as it goes between the double quotes.
std::string EscapeLabelValue(absl::string_view value);
// A sample value: integers without exponent or fraction (up to 2^53), other
// numbers in the shortest form that reads back exactly; NaN, +Inf, -Inf.
std::string FormatSampleValue(double value);

}  // namespace outbox

#endif  // OUTBOX_AGENT_TELEMETRY_PROMETHEUS_TEXT_H_
