// Copyright (c) edge-outbox authors.
//
// The metrics reference (docs/metrics-and-logs.md, once the README's: the
// test keeps its name) stays true: every metric it lists is emitted with the
// type it gives, and every metric emitted is listed.

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/telemetry/agent_metrics.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

// name -> type, from the reference's rows "| `name` | type | ...", between
// the metrics-reference markers.
std::map<std::string, std::string> DocumentedMetrics() {
  std::ifstream in(OUTBOX_METRICS_DOC);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const size_t begin = all.find("<!-- metrics-reference:begin -->");
  const size_t end = all.find("<!-- metrics-reference:end -->");
  std::map<std::string, std::string> out;
  if (begin == std::string::npos || end == std::string::npos) return out;
  for (absl::string_view line : absl::StrSplit(
           absl::string_view(all).substr(begin, end - begin), '\n')) {
    std::vector<absl::string_view> cells = absl::StrSplit(line, '|');
    if (cells.size() < 4) continue;
    absl::string_view name = absl::StripAsciiWhitespace(cells[1]);
    if (!absl::ConsumePrefix(&name, "`outbox_") ||
        !absl::ConsumeSuffix(&name, "`")) {
      continue;  // the header row, the separator
    }
    out[absl::StrCat("outbox_", name)] =
        std::string(absl::StripAsciiWhitespace(cells[2]));
  }
  return out;
}

std::map<std::string, std::string> EmittedMetrics() {
  const char* kTypes[] = {"counter", "gauge", "histogram"};
  std::map<std::string, std::string> out;
  AgentMetrics metrics;
  for (const MetricFamily& f : metrics.Families(
           Stats(), 0,
           {AgentMetrics::DestinationState{"backend", "http", {}}})) {
    out[f.name] = kTypes[static_cast<int>(f.type)];
  }
  return out;
}

TEST(ReadmeMetricsTest, ReferenceListsExactlyTheMetricsEmittedWithTheirTypes) {
  const std::map<std::string, std::string> documented = DocumentedMetrics();
  ASSERT_FALSE(documented.empty())
      << "no metrics reference in " OUTBOX_METRICS_DOC;
  EXPECT_EQ(documented, EmittedMetrics());
}

}  // namespace
}  // namespace outbox
