// Copyright (c) edge-outbox authors.
//
// One drain of the drain-time rows (drain_time_rows.cc): a store filled
// with the demo's sales, drained by the agent (on the calling thread) into
// the real outbox-sink through the emulated cellular link (cellular_link.h,
// link_relay.h), and what it cost: wall time, bytes each way, agent CPU,
// resets, and the commit-to-answer latency of a stream of events committed
// behind the backlog while it drains.

#ifndef OUTBOX_TESTS_BENCH_CELLULAR_DRAIN_H_
#define OUTBOX_TESTS_BENCH_CELLULAR_DRAIN_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "outbox/options.h"
#include "tests/bench/bench_env.h"
#include "tests/bench/cellular_link.h"

namespace outbox::bench {

// Events committed behind the backlog once its drain has begun, one every
// `spacing`: their latency from commit to the sink's answer is measured.
struct TrailingStream {
  int count = 0;  // 0: none
  std::string type = "refund.created";
  absl::Duration spacing = absl::Milliseconds(10);
};

struct DrainSpec {
  int events = 0;     // sales in the backlog
  int in_flight = 1;  // agent max_in_flight
  // "": one event per request; else batches of kBatchEvents with this
  // batch.compression ("none", "gzip", "zstd").
  std::string coding;
  bool keyed_by_till = false;  // the demo's key: FIFO, one request at a time
  TrailingStream trailing;
  // Changes the store's Options before it is opened (event classes and
  // their priorities, once the store has them).
  std::function<void(Options*)> store_options;
};

struct DrainFigures {
  absl::Duration elapsed;   // from the agent's first RunOnce to the last 2xx
  int64_t delivered = 0;    // distinct events the sink logged
  int64_t duplicates = 0;   // lines for events it had logged already
  uint64_t requests = 0;    // the agent's
  ShapedBytes up, down;     // through the link's token buckets
  uint64_t http_bytes = 0;  // what the agent sent (HTTP headers and bodies)
  uint64_t resets = 0, connections = 0;
  double cpu_us_per_event = 0;
  Latencies trailing;  // commit to the sink's answer, microseconds
  // outbox_drain_eta_seconds{destination="sink"} read from the agent's
  // metrics file once a quarter of the events were delivered (-1 if it was
  // not there), and how long the rest then took.
  double eta_seconds = -1;
  absl::Duration rest;

  double per_second() const;
};

inline constexpr int kBatchEvents = 50;

// Runs one drain in `dir` over `link`. REQUIRES: called on the thread that
// entered the link. Errors: the first failed step's.
absl::StatusOr<DrainFigures> RunCellularDrain(const DrainSpec& spec,
                                              CellularLink* link,
                                              const std::string& dir);

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_CELLULAR_DRAIN_H_
