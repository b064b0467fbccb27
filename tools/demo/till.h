// Copyright (c) edge-outbox authors.
//
// One till of the demo: outbox-pos-sim on its own store, started again
// after a SIGKILL. It reads the till's "sale <sale-id> <event-id>" lines
// (each one a committed sale: pos-sim prints it only after its commit
// returned), "refund <sale-id> <event-id>" (--refund-every: a committed
// refund) and "drained".

#ifndef OUTBOX_TOOLS_DEMO_TILL_H_
#define OUTBOX_TOOLS_DEMO_TILL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "platform/child_process.h"
#include "tools/audit/delivery_audit.h"

namespace outbox::demo {

struct TillSpec {
  std::string name;         // --till: ordering key, sale-id prefix
  std::string db;           // its store
  std::string config_path;  // its agent's configuration
  std::string stderr_path;  // every run appends here
  int64_t sales = 0;        // --sales (a restart continues the count)
  double rate = 100;        // --rate
  std::vector<std::string> more_flags;  // e.g. --saga per_step
};

// REQUIRES: External synchronization.
class Till {
 public:
  enum class State { kNotStarted, kRunning, kKilled, kExited };

  Till(std::string pos_sim_binary, TillSpec spec)
      : binary_(std::move(pos_sim_binary)), spec_(std::move(spec)) {}

  // Starts a run of outbox-pos-sim. REQUIRES: no run is going.
  // Errors: PosixError codes of posix_spawn.
  absl::Status Start();

  // Reads what the run printed since the last call and notices its exit.
  // Errors: kInternal for a line pos-sim never prints (naming it).
  absl::Status Poll();

  // SIGKILLs and reaps the run, then reads the lines it had written.
  // REQUIRES: state() == kRunning.
  absl::Status Kill();

  // Freezes the run (SIGSTOP) / lets it go on (SIGCONT). A frozen till
  // makes no progress however long it is held. REQUIRES: state() ==
  // kRunning. Errors: PosixError codes of kill(2).
  absl::Status Pause();
  absl::Status Resume();

  // Asks a running run to stop (SIGTERM, after a SIGCONT in case it is
  // frozen) and waits up to `grace` before SIGKILL. For cleanup; a no-op
  // when nothing runs.
  void Stop(absl::Duration grace);

  // OK unless the run exited (state() == kExited) with an error or before
  // it printed "drained": then kInternal naming its stderr file.
  absl::Status ExitStatus() const;

  const TillSpec& spec() const { return spec_; }
  State state() const { return state_; }
  // The current run printed "drained" (cleared by Start).
  bool drained() const { return drained_; }
  // Exit code of the last run, once state() == kExited.
  int exit_code() const { return exit_code_; }
  int runs() const { return runs_; }
  // When the current run started.
  absl::Time run_started() const { return run_started_; }
  // Every "sale" line of every run, in order.
  const std::vector<audit::AcknowledgedSale>& acknowledged() const {
    return acknowledged_;
  }
  // Every "refund" line of every run, in order.
  const std::vector<audit::AcknowledgedSale>& refunded() const {
    return refunded_;
  }

 private:
  absl::Status ReadLines();
  absl::Status Record(const std::string& line);

  const std::string binary_;
  const TillSpec spec_;
  std::unique_ptr<ChildProcess> child_;
  State state_ = State::kNotStarted;
  bool drained_ = false;
  int exit_code_ = -1;
  int runs_ = 0;
  absl::Time run_started_ = absl::InfinitePast();
  std::vector<audit::AcknowledgedSale> acknowledged_;
  std::vector<audit::AcknowledgedSale> refunded_;
};

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_TILL_H_
