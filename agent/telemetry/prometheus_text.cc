// Copyright (c) edge-outbox authors.

#include "agent/telemetry/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace outbox {
namespace {

absl::string_view TypeName(MetricFamily::Type type) {
  switch (type) {
    case MetricFamily::Type::kCounter:
      return "counter";
    case MetricFamily::Type::kGauge:
      return "gauge";
    case MetricFamily::Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Backslash and line feed always; a double quote only inside a label
// value, since HELP text is not quoted.
std::string Escape(absl::string_view text, bool quote) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || (quote && c == '"')) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void AppendSample(const std::string& name, const MetricSample& sample,
                  std::string* out) {
  absl::StrAppend(out, name, sample.suffix);
  if (!sample.labels.empty()) {
    out->push_back('{');
    for (size_t i = 0; i < sample.labels.size(); ++i) {
      absl::StrAppend(out, i == 0 ? "" : ",", sample.labels[i].first, "=\"",
                      EscapeLabelValue(sample.labels[i].second), "\"");
    }
    out->push_back('}');
  }
  absl::StrAppend(out, " ", FormatSampleValue(sample.value), "\n");
}

}  // namespace

MetricFamily Family(std::string name, MetricFamily::Type type,
                    std::string help) {
  MetricFamily f;
  f.name = std::move(name);
  f.type = type;
  f.help = std::move(help);
  return f;
}

MetricFamily Family(std::string name, MetricFamily::Type type, std::string help,
                    double value) {
  MetricFamily f = Family(std::move(name), type, std::move(help));
  f.samples.push_back(MetricSample{"", {}, value});
  return f;
}

void AddHistogram(const Histogram& histogram, const MetricLabels& labels,
                  MetricFamily* family) {
  uint64_t cumulative = 0;
  auto bucket = [&](std::string le, double value) {
    MetricLabels with_le = labels;
    with_le.emplace_back("le", std::move(le));
    family->samples.push_back(MetricSample{"_bucket", with_le, value});
  };
  for (size_t i = 0; i < histogram.upper_bounds.size(); ++i) {
    if (i < histogram.counts.size()) cumulative += histogram.counts[i];
    bucket(FormatSampleValue(histogram.upper_bounds[i]),
           static_cast<double>(cumulative));
  }
  // +Inf holds every observation, so it equals _count by construction.
  bucket("+Inf", static_cast<double>(histogram.count));
  family->samples.push_back(
      MetricSample{"_sum", labels, histogram.sum_seconds});
  family->samples.push_back(
      MetricSample{"_count", labels, static_cast<double>(histogram.count)});
}

std::string RenderPrometheusText(absl::Span<const MetricFamily> families) {
  std::string out;
  for (const MetricFamily& f : families) {
    absl::StrAppend(&out, "# HELP ", f.name, " ",
                    Escape(f.help, /*quote=*/false), "\n");
    absl::StrAppend(&out, "# TYPE ", f.name, " ", TypeName(f.type), "\n");
    for (const MetricSample& sample : f.samples) {
      AppendSample(f.name, sample, &out);
    }
  }
  return out;
}

std::string EscapeLabelValue(absl::string_view value) {
  return Escape(value, /*quote=*/true);
}

std::string FormatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (value == std::floor(value) && std::fabs(value) <= kExactIntegers) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  // Plain decimals where they stay short ("0.0001", not "1e-04").
  const double magnitude = std::fabs(value);
  const std::chars_format format = magnitude >= 1e-6 && magnitude < 1e15
                                       ? std::chars_format::fixed
                                       : std::chars_format::general;
  char buffer[64];
  const std::to_chars_result r =
      std::to_chars(buffer, buffer + sizeof(buffer), value, format);
  return std::string(buffer, r.ptr);
}

}  // namespace outbox
