// Copyright (c) edge-outbox authors.
//
// A bare sender: a small load generator (libcurl multi) that sends
// outbox-sink pre-signed Standard Webhooks requests, as the agent would send
// them (same headers, a 300 B body), over keep-alive connections, a fixed
// number in flight. Signing happens before the clock starts, so the figure
// is what one libcurl sender gets through the sink and loopback with no
// store behind it. Not a ceiling: the agent's drain, which also reads and
// settles the store, has measured faster than this sender.

#ifndef OUTBOX_TESTS_BENCH_SINK_LOAD_H_
#define OUTBOX_TESTS_BENCH_SINK_LOAD_H_

#include <string>

#include "absl/status/statusor.h"
#include "tests/bench/bench_rounds.h"

namespace outbox::bench {

// POSTs `total` requests to `url`, `in_flight` at a time, with ids
// "<id_prefix>-<i>" signed by `secret` ("whsec_..."); latencies run from
// sent to answered. Errors: kUnavailable for a transfer that failed or an
// answer that was not 2xx.
absl::StatusOr<Throughput> LoadSink(const std::string& url,
                                    const std::string& secret, int total,
                                    int in_flight,
                                    const std::string& id_prefix);

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_SINK_LOAD_H_
