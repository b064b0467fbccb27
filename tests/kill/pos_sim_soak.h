// Copyright (c) edge-outbox authors.
//
// The driver of the SIGKILL soak (see pos_sim_kill_test.cc for what it
// proves): starts outbox-pos-sim against one store again and again, reads
// its acknowledgements and SIGKILLs it at a moment drawn from a seeded plan.

#ifndef OUTBOX_TESTS_KILL_POS_SIM_SOAK_H_
#define OUTBOX_TESTS_KILL_POS_SIM_SOAK_H_

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tools/audit/delivery_audit.h"
#include "tools/audit/sink_log_tail.h"

namespace outbox {
class ChildProcess;
}  // namespace outbox

namespace outbox::testing {

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

// Where a run actually was when the kill landed. The soak's invariant must
// hold wherever that was; PosSimKillTest fails unless every phase but
// kNotKilled got at least one kill.
enum class KillPhase {
  kStarting,            // nothing printed yet: store open, recovery, agent
                        // start, the first commit
  kCommitting,          // sales printed, more to make, none committed
                        // without its line
  kCommittedUnprinted,  // a sale committed (the store's counter moved past
                        // it) but its "sale" line never printed
  kDelivering,          // every sale printed, "drained" not yet
  kAfterDrained,        // "drained" printed: agent stop, store close
  kNotKilled,           // the run exited first
};
inline constexpr KillPhase kKillPhases[] = {
    KillPhase::kStarting, KillPhase::kCommitting,
    KillPhase::kCommittedUnprinted, KillPhase::kDelivering,
    KillPhase::kAfterDrained};

// When a run is to be killed; each plan aims at one phase.
enum class KillPlan {
  kAtStartup,      // 0..150 ms after the start: kStarting
  kBetweenSales,   // in the sleep after its k-th "sale" line: kCommitting
  kDuringCommit,   // after the commit that follows its k-th line, before
                   // that sale's line (the run pauses kPrintAfter there):
                   // kCommittedUnprinted
  kAfterLastSale,  // 0..40 ms after its last "sale" line: kDelivering
  kAfterDrained,   // 0..10 ms after "drained": kAfterDrained
  kNone,           // the final run, left to drain and exit
};
const char* KillPlanName(KillPlan plan);
const char* KillPhaseName(KillPhase phase);
KillPhase TargetOf(KillPlan plan);

// One start of the simulator.
struct SoakRun {
  int index = 0;
  int64_t sales_flag = 0;
  KillPlan plan = KillPlan::kAtStartup;
  int64_t plan_arg = 0;      // ms or k
  int64_t to_make = 0;       // sales the run had to make
  int lines = 0;             // "sale" lines read before the kill
  int lines_after_kill = 0;  // complete lines still in the pipe after it
  int64_t committed = 0;     // sales its commits added to the store
  bool killed = false;
  int exit_code = -1;
  KillPhase phase = KillPhase::kNotKilled;
  int64_t backlog = 0;  // acknowledged, not yet answered 2xx, at the kill
  absl::Duration lifetime;
};

// REQUIRES: External synchronization.
class PosSimSoak {
 public:
  explicit PosSimSoak(SoakOptions options);

  // Kills `kills` runs (up to twice as many while a phase has no kill),
  // then lets one run drain and exit. Errors: a run that
  // exited other than 0 after "drained", printed something unexpected, or
  // stalled; the message names the run.
  absl::Status Run();

  // Waits until every sale up to the final --sales has reached the log
  // answered 2xx, or `timeout` passed (false). After Run(): a subscriber
  // may get a message after the broker acknowledged it to the agent.
  bool WaitDelivered(absl::Duration timeout);

  // For the audit: acknowledgements and the sink's requests so far.
  audit::AuditInput Input();
  const std::vector<SoakRun>& runs() const { return runs_; }
  // Last bytes of the simulator's stderr (every run appends to one file).
  std::string StderrTail() const;

 private:
  // The next plan: round robin, phases without a kill first (see .cc).
  KillPlan NextPlan();
  bool AllPhasesLanded();
  absl::Status RunOnce(int64_t new_sales, KillPlan plan);
  // The k or milliseconds of `plan` (see KillPlan).
  int64_t DrawPlanArg(KillPlan plan, int64_t to_make);
  // When to kill, given the run's last line (read at `line_at`; `lines` so
  // far) or "drained"; InfiniteFuture for not yet.
  absl::Time KillTime(const SoakRun& run, absl::Time line_at, bool drained);
  // Reads the run's output until `kill_at` (moved by KillTime once a line
  // arms the plan), its exit (*exited) or a stall (the error).
  absl::Status Watch(ChildProcess* child, absl::Time kill_at, SoakRun* run,
                     bool* drained, bool* exited);
  // SIGKILLs the run, then reads what it had written.
  void KillAndCollect(ChildProcess* child, bool* drained, SoakRun* run,
                      absl::Status* bad);
  // Reads the store's next-sale counter into *counter and sets run->phase.
  absl::Status SettlePhase(bool drained, SoakRun* run);
  void RecordLine(const std::string& line, SoakRun* run, bool after_kill,
                  bool* drained, absl::Status* bad);
  // Reads new sink log lines; returns how many distinct sales have been
  // answered 2xx so far.
  int64_t PollDeliveries();
  // The simulator's arguments for a run of `plan`.
  std::vector<std::string> Args(KillPlan plan) const;

  const SoakOptions options_;
  std::mt19937_64 rng_;
  std::string stderr_path_;
  audit::SinkLogTail tail_;
  size_t tail_seen_ = 0;
  std::set<int64_t> delivered_;
  int64_t sales_flag_ = 0;
  int64_t counter_ = 0;   // the store's next-sale counter after the last run
  size_t next_plan_ = 1;  // into kPlans; the first start is not killed early
  std::map<KillPhase, int> landed_;
  std::vector<audit::AcknowledgedSale> acknowledged_;
  std::vector<SoakRun> runs_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_KILL_POS_SIM_SOAK_H_
