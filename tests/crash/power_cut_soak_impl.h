// Copyright (c) edge-outbox authors.
//
// PowerCutSoak: the driver behind RunPowerCutSoak (power_cut_soak.h).
// Internal to the crash suite: power_cut_soak.cc runs the cycles and cuts
// the power, soak_workload.cc is what a cycle does while the power is on.

#ifndef OUTBOX_TESTS_CRASH_POWER_CUT_SOAK_IMPL_H_
#define OUTBOX_TESTS_CRASH_POWER_CUT_SOAK_IMPL_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "outbox/agent.h"
#include "outbox/options.h"
#include "outbox/store.h"
#include "rocksdb/env.h"
#include "tests/crash/observed_store.h"
#include "tests/crash/power_cut_soak.h"
#include "tests/crash/soak_cut_plan.h"
#include "tests/crash/soak_model.h"
#include "tests/crash/soak_report.h"
#include "tests/fault_fs/fault_injection_fs.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/recording_transport.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {

// The agent gives up after this many attempts (a 5xx streak ends as a dead
// letter now and then).
inline constexpr int kSoakMaxAttempts = 4;
// Each agent round moves both clocks this much: longer than any wait the
// agent schedules (see SoakAgentConfig), so whatever its random jitter,
// everything waiting is due at the next round.
inline constexpr absl::Duration kSoakRound = absl::Milliseconds(1200);
inline constexpr absl::Duration kSoakIdempotencyWindow = absl::Hours(1);
// A wall-clock jump: a board without a real-time clock booting six years
// behind, or NTP correcting it.
inline constexpr absl::Duration kSoakClockJump = absl::Hours(24 * 365 * 6);
// Every this many cycles, one burst and one jump are not left to chance.
inline constexpr int kSoakForcedEvery = 8;

// The agent's configuration: the receiver as one destination for events,
// and as one per step of the soak's workflow (SoakWorkflowConfig); retries,
// Retry-After and probes wait at most 1 s; dead letters are purged by the
// soak itself, never by the agent, and finished workflows kept.
std::string SoakAgentConfig();

// One soak run. Thread-compatible, driven by one thread; one per process at
// a time, because it owns the process-wide crash hook while it lives. Only
// the commit bursts (Burst) run on other threads, while this one waits; the
// crash hook (cut_) may fire on any of them.
class PowerCutSoak {
 public:
  explicit PowerCutSoak(const SoakOptions& options);
  ~PowerCutSoak();
  SoakReport Run();

 private:
  // --- power_cut_soak.cc: cycles, cuts, reopens ---
  absl::Status OpenStore();
  void StartAgent();
  void RunCycle(int cycle);
  // Whether Run stops: a fatal error, or the violation SoakOptions asks for.
  bool Done() const;
  // Ends the cycle's store and agent and cuts the power; returns where the
  // power went (see SoakReport::cuts).
  std::string ShutDown(const CutPlan& plan);
  std::string CutDuringReopen(const CutPlan& plan);
  void PowerCut();

  // --- soak_workload.cc: what a cycle does with the power on ---
  void Workload(int cycle);
  void Commit(size_t index, int cycle);
  // Tells the model and the report how a commit of txn `index`, made at
  // `now`, ended.
  void Record(size_t index, const absl::StatusOr<CommitResult>& result,
              absl::Time now, int cycle, bool power_on);
  // New transactions committed from 2-4 threads at once.
  void Burst(int cycle);
  void AgentRound();
  void ReplayOne();
  void PurgeDeadLetters();
  // Sets the wall clock six years back or forward, or back to where it
  // would be without jumps; then drains.
  void JumpWallClock();
  // With the receiver answering 2xx, runs agent rounds until nothing is
  // pending or every pending event had its turn; reports what is left
  // (stalled; `when` says which drain it was). False if the power went
  // first, so nothing was checked.
  bool Drain(absl::string_view when);

  bool Alive() const { return !fs_->IsDead(); }
  bool Chance(double p) {
    return std::uniform_real_distribution<double>(0, 1)(gen_) < p;
  }
  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(gen_);
  }
  // Reports `s` unless it is OK or the power is already gone.
  void Expect(const absl::Status& s, absl::string_view what);

  const SoakOptions options_;
  std::mt19937_64 gen_;
  TempDir dir_;
  std::shared_ptr<FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  FakeClock clock_;
  Options store_options_;
  Receiver receiver_;
  SoakModel model_;
  std::unique_ptr<Store> store_;
  // store_ as the agent and the workload use it: tells model_ about acks.
  std::unique_ptr<ObservedStore> observed_;
  std::unique_ptr<Agent> agent_;
  std::deque<std::string> agent_log_;
  std::vector<Violation> violations_;  // of the current cycle
  bool fatal_ = false;                 // no store to go on with
  SoakReport report_;
  uint64_t next_serial_ = 0;
  uint64_t commit_order_ = 0;
  // Mutating file operations of an uncut cycle and of a reopen (moving
  // averages): the range file-operation cuts are drawn from.
  double ops_per_cycle_ = 60;
  double ops_per_open_ = 40;
  // The named cut of the current cycle, as the crash hook sees it.
  ArmedCut cut_;
  // How far the wall clock is from where it would be without jumps.
  absl::Duration clock_offset_ = absl::ZeroDuration();
  // The wall clock jumped: the next cycle starts with a drain, which checks
  // the index the reopen rebuilt from stored wall-clock times.
  bool drain_after_reopen_ = false;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_POWER_CUT_SOAK_IMPL_H_
