// Copyright (c) edge-outbox authors.
//
// The delivery side of outbox_bench: the real outbox-sink as a child
// process, agent configurations, a drain measured on the calling thread,
// and an agent running on a thread of its own for the offline rows.

#ifndef OUTBOX_TESTS_BENCH_BENCH_AGENT_H_
#define OUTBOX_TESTS_BENCH_BENCH_AGENT_H_

#include <pthread.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "outbox/agent.h"
#include "outbox/store.h"
#include "tests/bench/bench_ops.h"
#include "tests/testing/sink_process.h"

namespace outbox::bench {

// A running outbox-sink (answers 200, logs each request) and its secret.
// REQUIRES: External synchronization.
class BenchSink {
 public:
  static constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

  // Starts OUTBOX_SINK_BINARY with its files in `dir` (created if need be).
  // Errors: kUnavailable.
  static absl::StatusOr<std::unique_ptr<BenchSink>> Start(
      const std::string& dir);
  ~BenchSink();

  std::string url() const;
  const std::string& secrets_file() const { return secrets_file_; }
  // Errors unless the log holds exactly `requests` lines, each with a
  // valid signature: the load generator's requests are what the agent's
  // would be.
  absl::Status CheckLogged(int requests) const;

 private:
  BenchSink() = default;
  std::string log_, secrets_file_;
  std::unique_ptr<sink::SinkProcess> process_;
};

// Configuration delivering every event to `url` with at most
// `max_in_flight` requests at once; the rest (retries, probes) default.
// `secrets_file` may be empty (unsigned).
std::string AgentConfig(const std::string& url, const std::string& secrets_file,
                        int max_in_flight);

struct DrainFigures {
  double per_second = 0;
  double cpu_us_per_event = 0;   // the agent's thread, this one
  double written_per_event = 0;  // /proc/self/io write_bytes
  Skipped skipped;               // by RocksDB on the agent's thread
};

// Creates an agent for `store` with `config` and runs Drain() on the
// calling thread. Errors: the agent's, or kInternal unless exactly `events`
// were delivered.
absl::StatusOr<DrainFigures> DrainWithAgent(Store& store,
                                            const std::string& config,
                                            int events);

// An agent in Run() on a thread of its own, watched from outside.
// REQUIRES: External synchronization.
class BackgroundAgent {
 public:
  // `store` must outlive the agent.
  static absl::StatusOr<std::unique_ptr<BackgroundAgent>> Start(
      Store* store, const std::string& config);
  // Stops the agent if Stop() was not called.
  ~BackgroundAgent();

  // CPU time of the agent's thread so far. REQUIRES: not stopped.
  absl::Duration Cpu() const;
  // Waits until the agent has logged a destination as unreachable.
  // Errors: kDeadlineExceeded after `timeout`.
  absl::Status WaitOffline(absl::Duration timeout) const;
  // Stops Run() and returns what it returned.
  absl::Status Stop();

 private:
  BackgroundAgent() = default;
  std::unique_ptr<Agent> agent_;
  std::thread thread_;
  pthread_t handle_{};  // thread_'s, for its CPU clock
  std::atomic<bool> offline_{false};
  absl::Status run_status_;  // written by the thread, read after join
};

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_BENCH_AGENT_H_
