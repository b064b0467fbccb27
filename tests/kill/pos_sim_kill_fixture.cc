// Copyright (c) edge-outbox authors.

#include "tests/kill/pos_sim_kill_fixture.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "outbox/store.h"
#include "tests/kill/pos_sim_soak.h"
#include "tests/testing/status.h"
#include "tools/audit/delivery_audit.h"

namespace outbox::testing {

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  uint64_t n = 0;
  return value != nullptr && absl::SimpleAtoi(value, &n) ? n : fallback;
}

namespace {

std::string RunTable(const std::vector<SoakRun>& runs) {
  std::string out = "run  --sales  plan(arg)  lines(+after kill)  end  phase\n";
  for (const SoakRun& r : runs) {
    absl::StrAppend(&out, r.index, "  ", r.sales_flag, "  ",
                    KillPlanName(r.plan), "(", r.plan_arg, ")  ", r.lines, "(+",
                    r.lines_after_kill, ")  ",
                    r.killed ? "killed" : absl::StrCat("exit ", r.exit_code),
                    "  ", KillPhaseName(r.phase), " after ",
                    absl::FormatDuration(r.lifetime), "\n");
  }
  return out;
}

void PrintSummary(uint64_t seed, const std::vector<SoakRun>& runs,
                  absl::Duration wall) {
  std::map<KillPhase, std::pair<int, int64_t>> phases;  // kills, backlog sum
  std::map<KillPlan, std::map<KillPhase, int>> plans;   // where each landed
  int kills = 0, read_after_kill = 0;
  for (const SoakRun& r : runs) {
    read_after_kill += r.lines_after_kill;
    if (!r.killed) continue;
    ++kills;
    ++plans[r.plan][r.phase];
    phases[r.phase].first += 1;
    phases[r.phase].second += r.backlog;
  }
  std::string plan_text, phase_text;
  for (const auto& [plan, landed] : plans) {
    absl::StrAppend(&plan_text, "\n[kill soak]   ", KillPlanName(plan), ":");
    for (const auto& [phase, count] : landed) {
      absl::StrAppend(&plan_text, " ", KillPhaseName(phase), " ", count);
    }
  }
  for (const auto& [phase, stat] : phases) {
    absl::StrAppend(&phase_text, phase_text.empty() ? "" : ", ",
                    KillPhaseName(phase), " ", stat.first, " (mean backlog ",
                    stat.second / stat.first, ")");
  }
  std::cout << "[kill soak] seed " << seed << ": " << kills << " kills in "
            << runs.size() << " runs, " << absl::FormatDuration(wall)
            << "\n[kill soak] planned, and where the kills landed:" << plan_text
            << "\n[kill soak] landed: " << phase_text
            << "\n[kill soak] sale lines read after a kill: " << read_after_kill
            << "\n";
}

}  // namespace

Periodically::Periodically(absl::Duration interval, std::function<bool()> tick)
    : thread_([this, interval, tick = std::move(tick)] {
        while (!stop_.WaitForNotificationWithTimeout(interval) && tick()) {
        }
      }) {}

Periodically::~Periodically() {
  stop_.Notify();
  thread_.join();
}

PosSimKillTest::PosSimKillTest()
    : seed_(EnvNumber("OUTBOX_KILL_SOAK_SEED", std::random_device{}())) {
  const char* keep = std::getenv("OUTBOX_KILL_SOAK_DIR");
  dir_ = keep != nullptr ? keep : temp_.path();
  std::filesystem::create_directories(dir_);
}

void PosSimKillTest::SoakAndAudit(const std::string& config_path,
                                  const std::string& log, int default_kills,
                                  bool signed_requests) {
  SoakOptions options;
  options.pos_sim_binary = OUTBOX_POS_SIM_BINARY;
  options.dir = dir_;
  options.config_path = config_path;
  options.sink_log = log;
  options.kills =
      static_cast<int>(EnvNumber("OUTBOX_KILL_SOAK_KILLS", default_kills));
  options.seed = seed_;
  PosSimSoak soak(options);
  const absl::Time start = absl::Now();
  const absl::Status ran = soak.Run();
  const absl::Duration wall = absl::Now() - start;
  PrintSummary(seed_, soak.runs(), wall);
  ASSERT_TRUE(ran.ok()) << ran << "\nseed " << seed_ << "\n"
                        << RunTable(soak.runs())
                        << "outbox-pos-sim stderr, last lines:\n"
                        << soak.StderrTail();
  // A soak whose kills stopped landing somewhere would pass without testing
  // it: 25 kills give each phase five turns.
  if (options.kills >= 25) {
    std::map<KillPhase, int> landed;
    for (const SoakRun& r : soak.runs()) ++landed[r.phase];
    for (KillPhase phase : kKillPhases) {
      EXPECT_GT(landed[phase], 0) << "no kill landed " << KillPhaseName(phase)
                                  << "; seed " << seed_ << "\n"
                                  << RunTable(soak.runs());
    }
  }
  // Bounded only to catch a receiver that lost messages; the audit then
  // names them.
  (void)soak.WaitDelivered(absl::Seconds(10));

  Options store_options;
  store_options.tables = {"sales"};
  auto store = Store::OpenReadOnly(store_options, dir_ + "/db");
  ASSERT_OUTBOX_OK(store);
  audit::AuditInput input = soak.Input();
  input.require_signatures = signed_requests;
  const audit::AuditReport report = audit::AuditDeliveries(input, store->get());
  std::cout << audit::AuditSummary(report, "[kill soak]") << std::endl;
  EXPECT_EQ(report.violation_count, 0)
      << "seed " << seed_ << "; keep the files with OUTBOX_KILL_SOAK_DIR\n"
      << absl::StrJoin(report.violations, "\n") << "\n"
      << RunTable(soak.runs());
  EXPECT_GT(report.committed, 0);
}

}  // namespace outbox::testing
