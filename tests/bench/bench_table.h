// Copyright (c) edge-outbox authors.
//
// The one table outbox_bench prints: each row a measured figure and its
// ratios against the baselines it names, all measured in the same run.

#ifndef OUTBOX_TESTS_BENCH_BENCH_TABLE_H_
#define OUTBOX_TESTS_BENCH_BENCH_TABLE_H_

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace outbox::bench {

// "<of> / <to>", both figure keys; an empty `of` means the row's own value.
struct Ratio {
  std::string of;
  std::string to;
};

struct Row {
  std::string key;    // how other rows name this figure as a baseline
  std::string label;  // "Commit, 8 producers"
  double value = 0;
  std::string unit;    // "/s", "us", "ms", "B/event"
  std::string detail;  // p50/p99, tombstones skipped, bytes written, ...
  std::vector<Ratio> ratios;
};

// Ratio of the row's value to figure `to`.
inline Ratio Vs(std::string to) { return Ratio{"", std::move(to)}; }

// REQUIRES: External synchronization.
class Table {
 public:
  // Adds a row; its value becomes figure `row.key`.
  void Add(Row row);
  // A figure that is only a baseline or a ratio's numerator (the limit's
  // p50, a p99), named `label` where a ratio prints it.
  void AddFigure(const std::string& key, const std::string& label,
                 double value);
  // The figure `key`, or -1 if it was never measured.
  double Figure(const std::string& key) const;

  // A Markdown table: | row | figure | detail | ratio vs baseline |.
  void Print(std::FILE* out) const;
  size_t rows() const { return rows_.size(); }

 private:
  std::string RatioText(const Row& row, const Ratio& ratio) const;

  std::vector<Row> rows_;
  std::map<std::string, double> figures_;
  std::map<std::string, std::string> labels_;
};

// A figure with as many digits as it deserves: 9213, 84.2, 1.37, 0.0123.
std::string FormatFigure(double value);

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_BENCH_TABLE_H_
