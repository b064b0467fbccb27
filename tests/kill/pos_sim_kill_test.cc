// Copyright (c) edge-outbox authors.
//
// SIGKILL soak of the real binaries. outbox-pos-sim (a till committing sales
// while the agent delivers them on a thread) is started again and again on
// one store and SIGKILLed, each run in one of five phases (pos_sim_soak.h):
// starting (nothing printed yet), committing (between sales), between a
// commit and its printed line (the store's counter shows a sale no line
// acknowledged), delivering (every sale printed, not drained) and after
// "drained" (shutting down). The plans aimed at them take turns, those
// aimed at a phase without a kill first, and the phase each kill landed in
// is read back from the output and the store. One outbox-sink receives
// throughout, failing (503) and dropping (answer lost after processing)
// some requests. A last run drains everything and exits.
//
// Invariant, checked against the sink's log and the store reopened at the
// end (delivery_audit.cc; each part by named checks, in brackets, each
// proven by delivery_audit_test.cc):
//   1. Every acknowledged sale (its "sale" line was read; a torn last line
//      is not one) was answered 2xx by the sink, under the event id printed
//      for it.              [acknowledged_not_delivered,
//      acknowledged_id_not_sent]
//   2. One identity per sale: all requests for a sale carry one webhook-id,
//      and all requests with one id carry the same body. Resends, and the
//      duplicates among them, are allowed.
//                                       [sale_with_two_ids, id_with_two_bodies]
//   3. Nothing reached the sink that was not committed: every sale the sink
//      saw is a record in the store naming that event id. (A sale committed
//      but killed before its line was printed may be delivered.)
//                                           [not_committed,
//                                           committed_id_differs]
//   4. Sales are contiguous: the store's next-sale counter equals the final
//      --sales, every sale below it was answered 2xx, none above it was
//      sent, and the queue ends empty with no dead letters.
//          [counter_wrong, committed_not_delivered, beyond_counter,
//          not_drained]
//   5. Commit order per till: sale n is first sent only after sale n-1 was
//      answered 2xx.                                          [order_broken]
//   Also: each sale is acknowledged at most once and within the sales
//   [acknowledged_twice, acknowledged_out_of_range], every request is a sale
//   of the till [not_a_sale_event] and its signature valid [bad_signature].
// And of the soak itself: with 25 kills or more, every phase above got at
// least one. Counted: kills per plan and per phase (with the backlog of
// acknowledged, undelivered sales at the kill), sales committed,
// acknowledged and committed without a line, the sink's requests, 2xx
// answers, duplicates, resends, drops and failures, and violations.
//
// Environment: OUTBOX_KILL_SOAK_KILLS (default 50; the `soak` ctest entry
// sets 500), OUTBOX_KILL_SOAK_SEED (default: random, printed; replays the
// kill plan, not the exact timing), OUTBOX_KILL_SOAK_DIR (run there and keep
// the store and logs for inspection).

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "tests/kill/pos_sim_soak.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"
#include "tests/testing/temp_dir.h"
#include "tools/audit/delivery_audit.h"

namespace outbox::testing {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  uint64_t n = 0;
  return value != nullptr && absl::SimpleAtoi(value, &n) ? n : fallback;
}

std::string WriteAgentConfig(const std::string& dir, int port,
                             const std::string& secret_path) {
  const std::string path = dir + "/agent.textproto";
  // Short retry and probe delays so that a run delivers within its short
  // life; timeouts well above a loopback answer.
  std::ofstream(path) << "destinations {\n"
                      << "  name: \"sink\"\n"
                      << "  url: \"http://127.0.0.1:" << port << "/\"\n"
                      << "  secrets_file: \"" << secret_path << "\"\n"
                      << "  connect_timeout: \"2s\"\n"
                      << "  timeout: \"5s\"\n"
                      << "}\n"
                      << "routes { event_type: \"*\" destination: \"sink\" }\n"
                      << "retry { base_delay: \"20ms\" max_delay: \"200ms\" }\n"
                      << "agent { probe_interval_min: \"50ms\" "
                      << "probe_interval_max: \"300ms\" }\n";
  return path;
}

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

TEST(PosSimKillTest, AcknowledgedSalesAreDeliveredOnceInOrderUnderSigkill) {
  TempDir temp;
  const char* keep = std::getenv("OUTBOX_KILL_SOAK_DIR");
  const std::string dir = keep != nullptr ? keep : temp.path();
  std::filesystem::create_directories(dir);
  const uint64_t seed =
      EnvNumber("OUTBOX_KILL_SOAK_SEED", std::random_device{}());

  const std::string secret_path = dir + "/secret";
  std::ofstream(secret_path) << kSecret << "\n";
  chmod(secret_path.c_str(), 0600);
  const std::string sink_log = dir + "/sink.log";
  auto sink = sink::SinkProcess::Start(
      TargetCommand(
          OUTBOX_SINK_BINARY,
          {"--secret-file", secret_path, "--log", sink_log, "--fail-rate",
           "0.1", "--drop-rate", "0.1", "--seed", absl::StrCat(seed)}),
      dir);
  ASSERT_OUTBOX_OK(sink);

  SoakOptions options;
  options.pos_sim_binary = OUTBOX_POS_SIM_BINARY;
  options.dir = dir;
  options.config_path = WriteAgentConfig(dir, (*sink)->port(), secret_path);
  options.sink_log = sink_log;
  options.kills = static_cast<int>(EnvNumber("OUTBOX_KILL_SOAK_KILLS", 50));
  options.seed = seed;
  PosSimSoak soak(options);
  const absl::Time start = absl::Now();
  const absl::Status ran = soak.Run();
  const absl::Duration wall = absl::Now() - start;
  PrintSummary(seed, soak.runs(), wall);
  ASSERT_OUTBOX_OK((*sink)->Stop());
  ASSERT_TRUE(ran.ok()) << ran << "\nseed " << seed << "\n"
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
                                  << "; seed " << seed << "\n"
                                  << RunTable(soak.runs());
    }
  }

  Options store_options;
  store_options.tables = {"sales"};
  auto store = Store::OpenReadOnly(store_options, dir + "/db");
  ASSERT_OUTBOX_OK(store);
  const audit::AuditReport report =
      audit::AuditDeliveries(soak.Input(), store->get());
  std::cout << "[kill soak] sales committed " << report.committed
            << ", acknowledged " << report.acknowledged
            << ", committed but never acknowledged "
            << report.committed_unacknowledged
            << "\n[kill soak] sink: " << report.requests << " requests, "
            << report.deliveries << " answered 2xx, " << report.duplicates
            << " duplicates, " << report.resends << " resends, " << report.drops
            << " drops, " << report.failures
            << " failed\n[kill soak] violations: " << report.violation_count;
  for (const auto& [check, count] : report.fired) {
    std::cout << (check == report.fired.begin()->first ? " (" : ", ") << check
              << " " << count;
  }
  std::cout << (report.fired.empty() ? "" : ")") << std::endl;
  EXPECT_EQ(report.violation_count, 0)
      << "seed " << seed << "; keep the files with OUTBOX_KILL_SOAK_DIR\n"
      << absl::StrJoin(report.violations, "\n") << "\n"
      << RunTable(soak.runs());
  EXPECT_GT(report.committed, 0);
}

}  // namespace
}  // namespace outbox::testing
