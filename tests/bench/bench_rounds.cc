// Copyright (c) edge-outbox authors.

#include "tests/bench/bench_rounds.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/synchronization/notification.h"
#include "base/status_macros.h"

namespace outbox::bench {

void Throughput::Add(const Throughput& slice) {
  ops += slice.ops;
  elapsed += slice.elapsed;
  latencies.Merge(slice.latencies);
}

absl::StatusOr<Throughput> RunProducers(
    int producers, int64_t first, int count,
    const std::function<absl::StatusOr<ProducerOp>(int producer)>& make) {
  std::vector<ProducerOp> ops;
  for (int p = 0; p < producers; ++p) {
    OUTBOX_ASSIGN_OR_RETURN(ProducerOp op, make(p));
    ops.push_back(std::move(op));
  }
  const int per_producer = count / producers;
  std::vector<Latencies> latencies(producers);
  std::vector<absl::Status> errors(producers);
  absl::Notification start;
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      start.WaitForNotification();
      for (int64_t i = first; i < first + per_producer && errors[p].ok(); ++i) {
        Stopwatch op;
        errors[p] = ops[p](i);
        latencies[p].Add(op.Elapsed());
      }
    });
  }
  Stopwatch wall;
  start.Notify();
  for (std::thread& t : threads) t.join();
  Throughput result;
  result.elapsed = wall.Elapsed();
  result.ops = int64_t{per_producer} * producers;
  for (int p = 0; p < producers; ++p) {
    OUTBOX_RETURN_IF_ERROR(errors[p]);
    result.latencies.Merge(latencies[p]);
  }
  return result;
}

int SliceSize(int rounds, int total) {
  return total / std::max(1, std::min(rounds, total));
}

absl::Status RunRounds(int rounds, int total,
                       const std::vector<Subject*>& subjects) {
  const int per_round = SliceSize(rounds, total);
  rounds = std::max(1, std::min(rounds, total));
  for (int r = 0; r < rounds; ++r) {
    for (Subject* subject : subjects) {
      const int64_t before = WriteBytes();
      OUTBOX_ASSIGN_OR_RETURN(
          Throughput slice, subject->slice(int64_t{r} * per_round, per_round));
      subject->written += WriteBytes() - before;
      subject->total.Add(slice);
    }
  }
  return absl::OkStatus();
}

}  // namespace outbox::bench
