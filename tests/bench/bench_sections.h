// Copyright (c) edge-outbox authors.
//
// The sections of outbox_bench. Each measures its rows into `table`, in
// directories of its own under `dir` (one directory for the whole run, so
// every row writes to the same disk), and removes nothing: the run's
// directory goes at the end. Errors: the first failed operation's status.

#ifndef OUTBOX_TESTS_BENCH_BENCH_SECTIONS_H_
#define OUTBOX_TESTS_BENCH_BENCH_SECTIONS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/bench/bench_env.h"
#include "tests/bench/bench_table.h"

namespace outbox::bench {

// The fdatasync limit, Commit with 1 and N producers, SQLite with 1 and N
// threads (N waiting in its busy handler, and N taking turns on a mutex),
// and the bytes each writes per commit (commit_rows.cc).
absl::Status RunCommitRows(const Scale& scale, const std::string& dir,
                           Table* table);

// NextDue + Settle against SQLite's SELECT + UPDATE under each contract of
// ours (lazy; durable per batch), and the bytes each side writes per
// acknowledged event (ack_rows.cc).
absl::Status RunAckRows(const Scale& scale, const std::string& dir,
                        Table* table);

// A bare sender (load generator) and the agent draining into outbox-sink
// (drain_rows.cc).
absl::Status RunDrainRows(const Scale& scale, const std::string& dir,
                          Table* table);

// outbox-agent --drain-and-exit in its own process into outbox-sink, 1, 8
// and 16 in flight, in rounds (process_drain_rows.cc).
absl::Status RunProcessDrainRows(const Scale& scale, const std::string& dir,
                                 Table* table);

// One ordering key into outbox-sink answering after 100 ms (a slow link):
// one event per request against batches of 100 (batch_rows.cc).
absl::Status RunBatchRows(const Scale& scale, const std::string& dir,
                          Table* table);

// The demo's sales in batches of 50, uncompressed, gzip and zstd: bytes
// the receiver read per event (wire_rows.cc).
absl::Status RunWireRows(const Scale& scale, const std::string& dir,
                         Table* table);

// Time to drain a day's backlog of sales over an emulated cellular link
// (tc in a private network namespace, and a delaying relay), one event per
// request against batches, compressed or not, 1 and 16 in flight
// (drain_time_rows.cc).
absl::Status RunDrainTimeRows(const Scale& scale, const std::string& dir,
                              Table* table);

// Drain, NextDue, ListPending and open after N events went through the
// queue, against a fresh store (churn_rows.cc).
absl::Status RunChurnRows(const Scale& scale, const std::string& dir,
                          Table* table);

// Commit and agent CPU while the destination is unreachable, with N pending
// against none (offline_rows.cc).
absl::Status RunOfflineRows(const Scale& scale, const std::string& dir,
                            Table* table);

// A destination's rate limit holding back 1,000 pending against N: what
// goes, and the agent's CPU while the rest waits (rate_limit_rows.cc).
absl::Status RunRateLimitRows(const Scale& scale, const std::string& dir,
                              Table* table);

// One metrics-file write as the agent makes it, with an empty store and N
// pending (metrics_rows.cc).
// Sales through a 3-step workflow against plain delivery, and beside a
// held backlog (workflow_rows.cc).
absl::Status RunWorkflowRows(const Scale& scale, const std::string& dir,
                             Table* table);

absl::Status RunMetricsRows(const Scale& scale, const std::string& dir,
                            Table* table);

// Open time and resident memory per backlog size, each in a child process
// (open_rows.cc). `self` is this program, re-run as the child.
absl::Status RunOpenRows(const Scale& scale, const std::string& dir,
                         const std::string& self, Table* table);
// The child's side: `outbox_bench --open-child <path> <default|small>`.
int RunOpenChild(int argc, char** argv);

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_BENCH_SECTIONS_H_
