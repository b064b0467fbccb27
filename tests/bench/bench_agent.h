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
#include "tests/bench/bench_rounds.h"
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
      const std::string& dir, const std::vector<std::string>& args = {});
  ~BenchSink();

  std::string url() const;
  const std::string& secrets_file() const { return secrets_file_; }
  int port() const;
  pid_t pid() const { return process_->pid(); }
  // Its request log: one JSON line per request (per event of a batch).
  const std::string& log_path() const { return log_; }
  // Errors unless every line of the log has a valid signature and exactly
  // `requests` of them have ids starting with `id_prefix`: the load
  // generator's requests are what the agent's would be.
  absl::Status CheckLogged(const std::string& id_prefix, int requests) const;

 private:
  BenchSink() = default;
  std::string log_, secrets_file_;
  std::unique_ptr<sink::SinkProcess> process_;
};

// Configuration delivering every event to `url` with at most
// `max_in_flight` requests at once; the rest (retries, probes) default.
// `secrets_file` may be empty (unsigned); `batch` is the destination's
// batch fields, `agent_fields` more fields of `agent { }`,
// `destination_fields` more fields of the destination (a rate_limit).
std::string AgentConfig(const std::string& url, const std::string& secrets_file,
                        int max_in_flight, const std::string& batch = "",
                        const std::string& agent_fields = "",
                        const std::string& destination_fields = "");

// An agent driven by RunOnce() on the calling thread (as a firmware main
// loop drives it), a slice of deliveries at a time, so that agents can be
// measured side by side in rounds (bench_rounds.h). REQUIRES: External
// synchronization.
class SteppedAgent {
 public:
  // An agent for `store` (borrowed; must outlive it) with `config`, to
  // deliver the `events` events the store holds.
  static absl::StatusOr<std::unique_ptr<SteppedAgent>> Create(
      Store* store, const std::string& config, int64_t events);

  // Runs the agent until `count` more events are delivered (or all are).
  // Errors: the agent's, or kDeadlineExceeded after a minute without one.
  absl::StatusOr<Throughput> Deliver(int count);

  // Totals over every Deliver() so far.
  uint64_t delivered() const { return agent_->stats().delivered; }
  uint64_t requests() const { return agent_->stats().requests; }
  // CPU in Deliver(): this thread's, and the store's syncer thread's (the
  // background syncs a workflow's steps wait for are the agent's work too).
  double cpu_us_per_event() const;
  // The syncer thread's part of cpu_us_per_event().
  double syncer_cpu_us_per_event() const;
  // This thread's time in the kernel, part of cpu_us_per_event().
  double kernel_cpu_us_per_event() const;
  // RunOnce() calls (agent rounds: one wait for work each) per event.
  double rounds_per_event() const;
  double written_per_event() const;  // /proc/self/io write_bytes
  const Skipped& skipped() const { return skipped_; }  // by RocksDB

 private:
  SteppedAgent(Store* store, std::unique_ptr<Agent> agent, int64_t events)
      : store_(store), agent_(std::move(agent)), events_(events) {}
  // This thread's CPU and the store's syncer's, so far.
  absl::Duration Cpu() const;
  // The store's syncer thread's CPU so far (zero while it has none).
  absl::Duration SyncerCpu() const;

  Store* const store_;
  std::unique_ptr<Agent> agent_;
  const int64_t events_;
  absl::Duration cpu_ = absl::ZeroDuration();
  absl::Duration syncer_cpu_ = absl::ZeroDuration();
  absl::Duration kernel_cpu_ = absl::ZeroDuration();
  int64_t rounds_ = 0;
  int64_t written_ = 0;
  Skipped skipped_;
};

// A Subject (bench_rounds.h) whose slices are agent->Deliver(count).
Subject DeliverySubject(SteppedAgent* agent);

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
