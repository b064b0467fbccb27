// Copyright (c) edge-outbox authors.

#include "tests/bench/bench_table.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace outbox::bench {

std::string FormatFigure(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 100) return absl::StrFormat("%.0f", value);
  if (magnitude >= 10) return absl::StrFormat("%.1f", value);
  if (magnitude >= 1) return absl::StrFormat("%.2f", value);
  return absl::StrFormat("%.3g", value);
}

void Table::Add(Row row) {
  AddFigure(row.key, row.label, row.value);
  rows_.push_back(std::move(row));
}

void Table::AddFigure(const std::string& key, const std::string& label,
                      double value) {
  figures_[key] = value;
  labels_[key] = label;
}

double Table::Figure(const std::string& key) const {
  auto it = figures_.find(key);
  return it == figures_.end() ? -1 : it->second;
}

std::string Table::RatioText(const Row& row, const Ratio& ratio) const {
  const std::string of = ratio.of.empty() ? row.key : ratio.of;
  const double numerator = Figure(of);
  const double denominator = Figure(ratio.to);
  auto label = labels_.find(ratio.to);
  const std::string to_label =
      label == labels_.end() ? ratio.to : label->second;
  const std::string prefix =
      ratio.of.empty() ? "" : absl::StrCat(labels_.at(of), " = ");
  if (numerator < 0 || denominator < 0) {
    return absl::StrCat(prefix, "n/a vs ", to_label, " (not measured)");
  }
  if (denominator == 0) return absl::StrCat(prefix, "vs 0 for ", to_label);
  return absl::StrCat(prefix, FormatFigure(numerator / denominator), "x ",
                      to_label);
}

void Table::Print(std::FILE* out) const {
  std::fprintf(out, "| row | figure | detail | ratio vs baseline |\n");
  std::fprintf(out, "|---|---:|---|---|\n");
  for (const Row& row : rows_) {
    std::vector<std::string> ratios;
    for (const Ratio& ratio : row.ratios) {
      ratios.push_back(RatioText(row, ratio));
    }
    std::fprintf(out, "| %s | %s %s | %s | %s |\n", row.label.c_str(),
                 FormatFigure(row.value).c_str(), row.unit.c_str(),
                 row.detail.c_str(), absl::StrJoin(ratios, "; ").c_str());
  }
  std::fflush(out);
}

}  // namespace outbox::bench
