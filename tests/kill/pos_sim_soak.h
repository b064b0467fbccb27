// Copyright (c) edge-outbox authors.
//
// The driver of the SIGKILL soak (see pos_sim_kill_test.cc for what it
// proves): starts outbox-pos-sim against one store again and again, reads
// its acknowledgements and SIGKILLs it at a moment drawn from a seeded plan.

#ifndef OUTBOX_TESTS_KILL_POS_SIM_SOAK_H_
#define OUTBOX_TESTS_KILL_POS_SIM_SOAK_H_

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tests/kill/delivery_audit.h"
#include "tests/kill/sink_log_tail.h"

namespace outbox::testing {

class ChildProcess;

struct SoakOptions {
  std::string pos_sim_binary;
  std::string dir;          // store, config, logs
  std::string config_path;  // agent configuration, written by the caller
  std::string sink_log;     // the sink's --log
  std::string till = "till-1";
  int kills = 50;
  uint64_t seed = 1;
  double rate = 200;       // --rate: sales per second
  int max_new_sales = 40;  // each start adds 0..this to --sales
  // A run that neither prints nor gets anything delivered for this long is
  // stuck: the soak stops and reports it.
  absl::Duration stall_timeout = absl::Seconds(60);
};

// When a run is to be killed, drawn per run.
enum class KillPlan {
  kAtStartup,        // 0..150 ms after the start: store open, recovery
  kAfterSaleLine,    // within one sale cycle after its k-th "sale" line
  kAfterDeliveries,  // once the sink saw j more sales: mid-delivery
  kAfterDrained,     // 0..10 ms after "drained": agent stop, store close
  kNone,             // the final run, left to drain and exit
};

// Where a run actually was when the kill landed.
enum class KillPhase {
  kNoOutputYet,   // nothing printed in this run yet
  kCommitting,    // sales printed, more to make
  kDelivering,    // every sale made, "drained" not printed
  kAfterDrained,  // "drained" printed, process shutting down
};
const char* KillPlanName(KillPlan plan);
const char* KillPhaseName(KillPhase phase);

// One start of the simulator.
struct SoakRun {
  int index = 0;
  int64_t sales_flag = 0;
  KillPlan plan = KillPlan::kAtStartup;
  int64_t plan_arg = 0;      // ms, k or j
  int lines = 0;             // "sale" lines read before the kill
  int lines_after_kill = 0;  // complete lines still in the pipe after it
  bool killed = false;
  int exit_code = -1;
  KillPhase phase = KillPhase::kNoOutputYet;
  int64_t backlog = 0;  // acknowledged, not yet answered 2xx, at the kill
  absl::Duration lifetime;
};

// REQUIRES: External synchronization.
class PosSimSoak {
 public:
  explicit PosSimSoak(SoakOptions options);

  // Kills `kills` runs, then lets one run drain and exit. Errors: a run that
  // exited other than 0 after "drained", printed something unexpected, or
  // stalled; the message names the run.
  absl::Status Run();

  // For the audit: acknowledgements and the sink's requests so far.
  AuditInput Input();
  const std::vector<SoakRun>& runs() const { return runs_; }
  // Last bytes of the simulator's stderr (every run appends to one file).
  std::string StderrTail() const;

 private:
  absl::Status RunOnce(int64_t new_sales, KillPlan plan);
  // The k, j or milliseconds of `plan` (see KillPlan).
  int64_t DrawPlanArg(KillPlan plan, int64_t new_sales, int64_t backlog);
  // Notes where the run is, SIGKILLs it, then reads what it had written.
  void KillAndCollect(ChildProcess* child, bool drained, SoakRun* run,
                      absl::Status* bad);
  void RecordLine(const std::string& line, SoakRun* run, bool after_kill,
                  bool* drained, absl::Status* bad);
  // Reads new sink log lines; returns how many distinct sales have been
  // answered 2xx so far.
  int64_t PollDeliveries();
  std::vector<std::string> Args() const;

  const SoakOptions options_;
  std::mt19937_64 rng_;
  std::string stderr_path_;
  SinkLogTail tail_;
  size_t tail_seen_ = 0;
  std::set<int64_t> delivered_;
  int64_t sales_flag_ = 0;
  std::vector<AcknowledgedSale> acknowledged_;
  std::vector<SoakRun> runs_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_KILL_POS_SIM_SOAK_H_
