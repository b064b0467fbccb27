// Copyright (c) edge-outbox authors.

#include "tests/crash/soak_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace outbox::testing {

bool SoakReport::HasViolation(ViolationKind kind) const {
  for (const Violation& v : violations) {
    if (v.kind == kind) return true;
  }
  return false;
}

std::vector<std::string> SoakReport::FiredChecks() const {
  std::vector<std::string> names;
  for (const Violation& v : violations) {
    const std::string name = ViolationKindName(v.kind);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return names;
}

std::string SoakReport::Summary() const {
  std::string s = absl::StrCat(
      "power-cut soak: seed ", seed, ", ", cycles, " cycles, ", events_checked,
      " event checks; commits ok ", commits_ok, ", failed in the cut ",
      commits_failed, ", duplicates ", duplicates, ", retried after a cut ",
      retries, "; receiver got ", receipts, " requests\n  bursts: ", bursts,
      " with ", burst_commits, " commits from 2-4 threads, ", burst_written,
      " written in ", burst_groups, " group writes; wall-clock jumps ",
      clock_jumps, ", drains checked ", drains,
      "\n  acknowledgements: ", acks.returned, " returned, ",
      acks.lost_uncovered, " lost uncovered in a cut (allowed), ",
      acks.confirmed, " confirmed by a reopen; delivered_total checked ",
      acks.total_checks, " times\n  workflows: ", workflows.events, " events (",
      workflows.cancels, " cancelled), ", workflows.steps, " step and ",
      workflows.reverts, " revert requests received in ", workflows.cycles,
      " cycles; at the end ", workflows.completed, " completed, ",
      workflows.compensated, " compensated, ", workflows.needs_attention,
      " needing attention, ", workflows.running, " running; ",
      workflows.resumed, " found half-way by a reopen; ", workflows.cuts,
      " cuts at workflow points; ", workflows.checks,
      " workflow checks\n  step results: ", acks.results_returned,
      " returned, ", acks.results_covered, " covered by a sync, ",
      acks.results_lost_uncovered,
      " uncovered in a cut (allowed: resent, same id); ",
      acks.workflow_deliveries_returned,
      " workflow events settled as delivered\n  cuts per point:");
  for (const auto& [where, n] : cuts)
    absl::StrAppend(&s, "\n    ", where, ": ", n);
  absl::StrAppend(&s, "\n  named points passed:");
  for (const auto& [point, n] : passages) {
    absl::StrAppend(&s, " ", point, "=", n);
  }
  return s;
}

std::string SoakReport::ViolationReport() const {
  std::string s =
      absl::StrCat("VIOLATION in cycle ", violation_cycle, " (seed ", seed,
                   ", power cut at: ", violation_cut,
                   "); reproduce with OUTBOX_SOAK_SEED=", seed,
                   "\n  checks fired: ", absl::StrJoin(FiredChecks(), ", "));
  for (const Violation& v : violations) {
    absl::StrAppend(&s, "\n  [", ViolationKindName(v.kind), "] ", v.detail);
  }
  if (!agent_log.empty()) absl::StrAppend(&s, "\n  agent log, last lines:");
  for (const std::string& line : agent_log) absl::StrAppend(&s, "\n    ", line);
  return s;
}

}  // namespace outbox::testing
