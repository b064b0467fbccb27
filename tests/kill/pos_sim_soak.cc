// Copyright (c) edge-outbox authors.

#include "tests/kill/pos_sim_soak.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/status_macros.h"
#include "tests/testing/child_process.h"

namespace outbox::testing {

const char* KillPlanName(KillPlan plan) {
  switch (plan) {
    case KillPlan::kAtStartup:
      return "at startup";
    case KillPlan::kAfterSaleLine:
      return "after sale line k";
    case KillPlan::kAfterDeliveries:
      return "after j deliveries";
    case KillPlan::kAfterDrained:
      return "after drained";
    case KillPlan::kNone:
      return "not killed";
  }
  return "?";
}

const char* KillPhaseName(KillPhase phase) {
  switch (phase) {
    case KillPhase::kNoOutputYet:
      return "no output yet";
    case KillPhase::kCommitting:
      return "committing";
    case KillPhase::kDelivering:
      return "delivering";
    case KillPhase::kAfterDrained:
      return "after drained";
  }
  return "?";
}

PosSimSoak::PosSimSoak(SoakOptions options)
    : options_(std::move(options)),
      rng_(options_.seed),
      stderr_path_(options_.dir + "/pos-sim.stderr"),
      tail_(options_.sink_log) {}

absl::Status PosSimSoak::Run() {
  int kills = 0;
  // A run ends without its kill only when the simulator exits first, which
  // the plans make rare; this bounds the loop if that stops being rare.
  const int max_starts = 3 * options_.kills + 20;
  while (kills < options_.kills) {
    if (static_cast<int>(runs_.size()) >= max_starts) {
      return absl::FailedPreconditionError(
          absl::StrCat("only ", kills, " of ", runs_.size(),
                       " runs were killed: the simulator kept exiting first"));
    }
    const int64_t new_sales =
        absl::Uniform(rng_, 0, options_.max_new_sales + 1);
    // The first start creates the store; kills during that are
    // first_start_kill_test.cc's subject, so the soak starts after it.
    const int draw = absl::Uniform(rng_, runs_.empty() ? 15 : 0, 100);
    const KillPlan plan = draw < 15   ? KillPlan::kAtStartup
                          : draw < 50 ? KillPlan::kAfterSaleLine
                          : draw < 85 ? KillPlan::kAfterDeliveries
                                      : KillPlan::kAfterDrained;
    OUTBOX_RETURN_IF_ERROR(RunOnce(new_sales, plan));
    if (runs_.back().killed) ++kills;
  }
  return RunOnce(0, KillPlan::kNone);
}

std::vector<std::string> PosSimSoak::Args() const {
  return {"--db",     options_.dir + "/db",
          "--config", options_.config_path,
          "--sales",  absl::StrCat(sales_flag_),
          "--rate",   absl::StrCat(options_.rate),
          "--till",   options_.till};
}

int64_t PosSimSoak::PollDeliveries() {
  tail_.Poll();
  const std::vector<SinkRequest>& requests = tail_.requests();
  for (; tail_seen_ < requests.size(); ++tail_seen_) {
    const SinkRequest& r = requests[tail_seen_];
    if (r.ok() && r.n >= 0) delivered_.insert(r.n);
  }
  return static_cast<int64_t>(delivered_.size());
}

void PosSimSoak::RecordLine(const std::string& line, SoakRun* run,
                            bool after_kill, bool* drained, absl::Status* bad) {
  if (line == "drained") {
    *drained = true;
    return;
  }
  const std::vector<std::string> parts = absl::StrSplit(line, ' ');
  const std::string prefix = options_.till + "-";
  int64_t n = -1;
  if (parts.size() != 3 || parts[0] != "sale" ||
      !absl::StartsWith(parts[1], prefix) ||
      !absl::SimpleAtoi(parts[1].substr(prefix.size()), &n) ||
      parts[2].empty()) {
    *bad = absl::InternalError(
        absl::StrCat("run ", run->index, " printed \"", line, "\""));
    return;
  }
  acknowledged_.push_back({n, parts[2], run->index});
  ++(after_kill ? run->lines_after_kill : run->lines);
}

int64_t PosSimSoak::DrawPlanArg(KillPlan plan, int64_t new_sales,
                                int64_t backlog) {
  switch (plan) {
    case KillPlan::kAtStartup:
      return absl::Uniform(rng_, 0, 151);
    case KillPlan::kAfterSaleLine:
      return absl::Uniform<int64_t>(rng_, 1,
                                    std::max<int64_t>(new_sales, 1) + 1);
    case KillPlan::kAfterDeliveries:
      return absl::Uniform<int64_t>(rng_, 1, backlog + new_sales + 2);
    case KillPlan::kAfterDrained:
      return absl::Uniform(rng_, 0, 11);
    case KillPlan::kNone:
      return 0;
  }
  return 0;
}

void PosSimSoak::KillAndCollect(ChildProcess* child, bool drained, SoakRun* run,
                                absl::Status* bad) {
  run->phase = drained           ? KillPhase::kAfterDrained
               : run->lines == 0 ? KillPhase::kNoOutputYet
               : acknowledged_.back().n + 1 < sales_flag_
                   ? KillPhase::kCommitting
                   : KillPhase::kDelivering;
  PollDeliveries();
  for (const AcknowledgedSale& a : acknowledged_) {
    if (delivered_.count(a.n) == 0) ++run->backlog;
  }
  child->Kill();
  run->killed = true;
  run->exit_code = child->exit_code();
  // Lines the simulator wrote before it died are acknowledgements too.
  std::string line;
  while (bad->ok() &&
         child->ReadLine(absl::Now(), &line) == ChildProcess::Read::kLine) {
    RecordLine(line, run, /*after_kill=*/true, &drained, bad);
  }
}

absl::Status PosSimSoak::RunOnce(int64_t new_sales, KillPlan plan) {
  sales_flag_ += new_sales;
  SoakRun run;
  run.index = static_cast<int>(runs_.size()) + 1;
  run.sales_flag = sales_flag_;
  run.plan = plan;
  const int64_t delivered_at_start = PollDeliveries();
  const int64_t backlog = std::max<int64_t>(
      0, static_cast<int64_t>(acknowledged_.size()) - delivered_at_start);
  run.plan_arg = DrawPlanArg(plan, new_sales, backlog);
  std::ofstream(stderr_path_, std::ios::app)
      << "=== run " << run.index << ": --sales " << sales_flag_ << ", kill "
      << KillPlanName(plan) << " " << run.plan_arg << "\n";

  auto child =
      ChildProcess::Start(options_.pos_sim_binary, Args(), stderr_path_);
  if (!child.ok()) return child.status();
  const absl::Time start = absl::Now();
  absl::Time kill_at = plan == KillPlan::kAtStartup
                           ? start + absl::Milliseconds(run.plan_arg)
                           : absl::InfiniteFuture();
  absl::Time last_progress = start;
  int64_t delivered = delivered_at_start;
  bool drained = false;
  bool exited = false;
  absl::Status bad;
  std::string line;
  while (bad.ok()) {
    const absl::Time now = absl::Now();
    if (now >= kill_at) break;
    if (now - last_progress > options_.stall_timeout) {
      bad = absl::DeadlineExceededError(
          absl::StrCat("run ", run.index, " made no progress for ",
                       absl::FormatDuration(options_.stall_timeout)));
      break;
    }
    const ChildProcess::Read got = (*child)->ReadLine(
        std::min(kill_at, now + absl::Milliseconds(20)), &line);
    if (got == ChildProcess::Read::kEof) {
      run.exit_code = (*child)->Wait(absl::Now() + absl::Seconds(30));
      exited = true;
      break;
    }
    if (got == ChildProcess::Read::kLine) {
      RecordLine(line, &run, /*after_kill=*/false, &drained, &bad);
      last_progress = absl::Now();
      const bool armed = kill_at != absl::InfiniteFuture();
      if (!armed && plan == KillPlan::kAfterSaleLine &&
          run.lines == run.plan_arg) {
        // Anywhere in the next cycle of the till: its sleep, its commit, or
        // between the commit and its line.
        const int64_t cycle_us = static_cast<int64_t>(1e6 / options_.rate);
        kill_at = last_progress + absl::Microseconds(absl::Uniform<int64_t>(
                                      rng_, 0, cycle_us + 1000));
      } else if (!armed && drained && plan != KillPlan::kNone) {
        // Every plan ends here at the latest: after "drained" the process
        // only stops its agent and closes the store.
        kill_at = last_progress +
                  absl::Milliseconds(plan == KillPlan::kAfterDrained
                                         ? run.plan_arg
                                         : absl::Uniform(rng_, 0, 11));
      }
    }
    const int64_t now_delivered = PollDeliveries();
    if (now_delivered > delivered) last_progress = absl::Now();
    delivered = now_delivered;
    if (plan == KillPlan::kAfterDeliveries &&
        kill_at == absl::InfiniteFuture() &&
        delivered - delivered_at_start >= run.plan_arg) {
      kill_at = absl::Now();
    }
  }

  if (!exited) {
    KillAndCollect(child->get(), drained, &run, &bad);
  } else if (bad.ok() && (run.exit_code != 0 || !drained)) {
    bad = absl::InternalError(
        absl::StrCat("run ", run.index, " exited with ", run.exit_code,
                     drained ? "" : " without printing \"drained\""));
  }
  run.lifetime = absl::Now() - start;
  runs_.push_back(run);
  return bad;
}

AuditInput PosSimSoak::Input() {
  PollDeliveries();
  AuditInput input;
  input.till = options_.till;
  input.sales = sales_flag_;
  input.acknowledged = acknowledged_;
  input.requests = tail_.requests();
  return input;
}

std::string PosSimSoak::StderrTail() const {
  std::ifstream in(stderr_path_);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  return text.size() <= 4000 ? text : text.substr(text.size() - 4000);
}

}  // namespace outbox::testing
