// Copyright (c) edge-outbox authors.
//
// SoakReport: what a power-cut soak run did and found.

#ifndef OUTBOX_TESTS_CRASH_SOAK_REPORT_H_
#define OUTBOX_TESTS_CRASH_SOAK_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/crash/soak_acks.h"
#include "tests/crash/soak_violation.h"
#include "tests/crash/soak_workflows.h"

namespace outbox::testing {

struct SoakReport {
  uint64_t seed = 0;
  int cycles = 0;
  uint64_t events_checked = 0;
  uint64_t commits_ok = 0;
  uint64_t commits_failed = 0;
  uint64_t duplicates = 0;  // commits answered as duplicates
  uint64_t retries = 0;     // in-doubt transactions committed again
  uint64_t receipts = 0;    // requests that reached the receiver
  // Commits from several threads at once: the bursts, their Commit calls,
  // the commits that reached their write (kCommitBeforeWrite) and the group
  // writes those made (kGroupBeforeWrite). Fewer groups than commits
  // written: writers did queue behind a leader.
  uint64_t bursts = 0;
  uint64_t burst_commits = 0;
  uint64_t burst_written = 0;
  uint64_t burst_groups = 0;
  uint64_t clock_jumps = 0;  // wall-clock jumps (FakeClock::Set)
  uint64_t drains = 0;       // drains checked with the power on
  AckCounts acks;            // acknowledgements and their checks
  WorkflowCounts workflows;  // the workflow events, their cycles and cuts
  // Where the power went, by cycle count: a named crash point, "file op
  // <kind>", "file op <kind> in reopen", "clean close" (no cut planned), or
  // "<plan> not reached".
  std::map<std::string, int> cuts;
  // Times each named crash point was passed, cut or not.
  std::map<std::string, uint64_t> passages;
  // The violations of the first cycle that had any, with where its power
  // went; empty if none.
  std::vector<Violation> violations;
  int violation_cycle = -1;
  std::string violation_cut;
  // The agent's last log lines before the violation (ids, never payloads).
  std::vector<std::string> agent_log;

  bool HasViolation(ViolationKind kind) const;
  // The names of the checks that fired (ViolationKindName), each once, in
  // the order they first fired.
  std::vector<std::string> FiredChecks() const;
  // Multi-line summary of the figures above.
  std::string Summary() const;
  // Seed, cycle, cut point, the checks that fired and each violation.
  std::string ViolationReport() const;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_REPORT_H_
