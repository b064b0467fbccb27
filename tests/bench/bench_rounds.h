// Copyright (c) edge-outbox authors.
//
// Rows measured side by side in rounds. The disk of a shared machine
// changes speed by several times within minutes (other builds and tests
// fsync too), so rows measured one after the other would compare moments,
// not designs. Each round runs a slice of every subject in turn instead:
// every subject meets the same disk, and their ratios hold.

#ifndef OUTBOX_TESTS_BENCH_BENCH_ROUNDS_H_
#define OUTBOX_TESTS_BENCH_BENCH_ROUNDS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/bench/bench_env.h"

namespace outbox::bench {

// Operations done, the wall time they took, and each one's latency.
struct Throughput {
  int64_t ops = 0;
  absl::Duration elapsed = absl::ZeroDuration();
  Latencies latencies;

  double per_second() const {
    return ops / std::max(absl::ToDoubleSeconds(elapsed), 1e-9);
  }
  void Add(const Throughput& slice);
};

// Runs `count` operations over `producers` threads started together.
// `make(p)` makes producer p's operation (its own connection, say) before
// the clock starts; it is called with indices first + k, 0 <= k <
// count / producers, so that indices stay unique over slices.
using ProducerOp = std::function<absl::Status(int64_t i)>;
absl::StatusOr<Throughput> RunProducers(
    int producers, int64_t first, int count,
    const std::function<absl::StatusOr<ProducerOp>(int producer)>& make);

// One thing measured in rounds. `slice(first, count)` runs operations
// first..first+count-1 and reports them.
struct Subject {
  using Slice =
      std::function<absl::StatusOr<Throughput>(int64_t first, int count)>;
  Subject() = default;
  explicit Subject(Slice s) : slice(std::move(s)) {}

  Slice slice;
  Throughput total;     // over all slices
  int64_t written = 0;  // /proc/self/io write_bytes during its slices
};

// Runs `rounds` rounds, each a slice of SliceSize(rounds, total) operations
// of every subject in turn. Errors: the first failed slice's.
absl::Status RunRounds(int rounds, int total,
                       const std::vector<Subject*>& subjects);

// The operations of each subject in each of RunRounds' rounds: total /
// rounds, with at least one operation per round.
int SliceSize(int rounds, int total);

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_BENCH_ROUNDS_H_
