// Copyright (c) edge-outbox authors.

#include "tests/kill/pos_sim_soak.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "outbox/store.h"
#include "platform/child_process.h"
#include "tests/testing/target_command.h"

namespace outbox::testing {

namespace {

// The plans, in round-robin order.
constexpr KillPlan kPlans[] = {
    KillPlan::kAtStartup, KillPlan::kBetweenSales, KillPlan::kDuringCommit,
    KillPlan::kAfterLastSale, KillPlan::kAfterDrained};
// kDuringCommit's runs pause this long between a commit and its line.
constexpr absl::Duration kPrintAfter = absl::Milliseconds(200);
constexpr char kTable[] = "sales";             // as in pos_sim_main.cc
constexpr char kNextSaleKey[] = "!next-sale";  // as in pos_sim_main.cc

}  // namespace

const char* KillPlanName(KillPlan plan) {
  switch (plan) {
    case KillPlan::kAtStartup:
      return "at startup";
    case KillPlan::kBetweenSales:
      return "between sales";
    case KillPlan::kDuringCommit:
      return "during a commit";
    case KillPlan::kAfterLastSale:
      return "after the last sale";
    case KillPlan::kAfterDrained:
      return "after drained";
    case KillPlan::kNone:
      return "not killed";
  }
  return "?";
}

const char* KillPhaseName(KillPhase phase) {
  switch (phase) {
    case KillPhase::kStarting:
      return "starting";
    case KillPhase::kCommitting:
      return "committing";
    case KillPhase::kCommittedUnprinted:
      return "between a commit and its line";
    case KillPhase::kDelivering:
      return "delivering";
    case KillPhase::kAfterDrained:
      return "after drained";
    case KillPhase::kNotKilled:
      return "not killed";
  }
  return "?";
}

KillPhase TargetOf(KillPlan plan) {
  switch (plan) {
    case KillPlan::kAtStartup:
      return KillPhase::kStarting;
    case KillPlan::kBetweenSales:
      return KillPhase::kCommitting;
    case KillPlan::kDuringCommit:
      return KillPhase::kCommittedUnprinted;
    case KillPlan::kAfterLastSale:
      return KillPhase::kDelivering;
    case KillPlan::kAfterDrained:
      return KillPhase::kAfterDrained;
    case KillPlan::kNone:
      return KillPhase::kNotKilled;
  }
  return KillPhase::kNotKilled;
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
  const int max_starts = 6 * options_.kills + 20;
  // A phase that got no kill in `kills` gets up to as many again, each
  // aimed at a phase without one (NextPlan): a short soak on a loaded
  // machine can keep missing a narrow window, and would then test less.
  while (kills < options_.kills ||
         (!AllPhasesLanded() && kills < 2 * options_.kills)) {
    if (static_cast<int>(runs_.size()) >= max_starts) {
      return absl::FailedPreconditionError(
          absl::StrCat("only ", kills, " of ", runs_.size(),
                       " runs were killed: the simulator kept exiting first"));
    }
    const KillPlan plan = NextPlan();
    OUTBOX_RETURN_IF_ERROR(
        RunOnce(absl::Uniform(rng_, 0, options_.max_new_sales + 1), plan));
    if (runs_.back().killed) ++kills;
  }
  return RunOnce(0, KillPlan::kNone);
}

// Round robin, so that every phase gets its share of the kills whatever the
// seed (a draw per run can starve one). A plan can miss its phase: timing on
// a shared machine is loose, and a kill in a commit may land before the WAL
// write. So while some phase has no kill yet, plans aimed at such phases go
// first, and the 50 kills of `make test` reach every phase. The first start
// (next_plan_ = 1) is not killed at startup: kills while the store is first
// created are first_start_kill_test.cc's subject.
KillPlan PosSimSoak::NextPlan() {
  const size_t n = std::size(kPlans);
  const bool all_landed = AllPhasesLanded();
  for (size_t i = 0; i < n; ++i) {
    const size_t at = (next_plan_ + i) % n;
    if (all_landed || landed_[TargetOf(kPlans[at])] == 0) {
      next_plan_ = at + 1;
      return kPlans[at];
    }
  }
  return kPlans[next_plan_++ % n];  // not reached: some phase has none
}

bool PosSimSoak::AllPhasesLanded() {
  for (KillPhase phase : kKillPhases) {
    if (landed_[phase] == 0) return false;
  }
  return true;
}

std::vector<std::string> PosSimSoak::Args(KillPlan plan) const {
  std::vector<std::string> args = {"--db",     options_.dir + "/db",
                                   "--config", options_.config_path,
                                   "--sales",  absl::StrCat(sales_flag_),
                                   "--rate",   absl::StrCat(options_.rate),
                                   "--till",   options_.till};
  if (plan == KillPlan::kDuringCommit) {
    // The window between a commit and its line is otherwise a few
    // microseconds of printing: kills aimed at it landed there about one
    // soak in six on a loaded machine, and never in some.
    args.push_back("--print-after");
    args.push_back(absl::FormatDuration(kPrintAfter));
  }
  return args;
}

int64_t PosSimSoak::PollDeliveries() {
  tail_.Poll();
  const std::vector<audit::SinkRequest>& requests = tail_.requests();
  for (; tail_seen_ < requests.size(); ++tail_seen_) {
    const audit::SinkRequest& r = requests[tail_seen_];
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

int64_t PosSimSoak::DrawPlanArg(KillPlan plan, int64_t to_make) {
  switch (plan) {
    case KillPlan::kAtStartup:
      return absl::Uniform(rng_, 0, 151);
    case KillPlan::kBetweenSales:
    case KillPlan::kDuringCommit:
      return absl::Uniform<int64_t>(rng_, 1, std::max<int64_t>(to_make, 2));
    case KillPlan::kAfterLastSale:
      return absl::Uniform(rng_, 0, 41);
    case KillPlan::kAfterDrained:
      return absl::Uniform(rng_, 0, 11);
    case KillPlan::kNone:
      return 0;
  }
  return 0;
}

absl::Time PosSimSoak::KillTime(const SoakRun& run, absl::Time line_at,
                                bool drained) {
  if (run.plan == KillPlan::kNone) return absl::InfiniteFuture();
  if (drained) {
    // Every plan ends here at the latest: after "drained" the process only
    // stops its agent and closes the store.
    return line_at + absl::Milliseconds(run.plan == KillPlan::kAfterDrained
                                            ? run.plan_arg
                                            : absl::Uniform(rng_, 0, 11));
  }
  const absl::Duration gap = absl::Seconds(1 / options_.rate);
  auto up_to = [&](absl::Duration d) {
    return absl::Microseconds(absl::Uniform<int64_t>(
        rng_, 0, std::max<int64_t>(1, absl::ToInt64Microseconds(d))));
  };
  switch (run.plan) {
    case KillPlan::kBetweenSales:
      if (run.lines != run.plan_arg) break;
      return line_at + up_to(gap * 0.8);  // in the till's sleep
    case KillPlan::kDuringCommit:
      if (run.lines != run.plan_arg) break;
      // After the sleep the next commit (a few ms) and then the pause
      // before its line: aimed at the pause's middle, so that neither a
      // slow commit nor a late read of this line moves the kill out of it.
      return line_at + gap + kPrintAfter / 4 + up_to(kPrintAfter / 2);
    case KillPlan::kAfterLastSale:
      if (run.lines != run.to_make) break;
      return line_at + absl::Milliseconds(run.plan_arg);
    default:
      break;
  }
  return absl::InfiniteFuture();
}

void PosSimSoak::KillAndCollect(ChildProcess* child, bool* drained,
                                SoakRun* run, absl::Status* bad) {
  PollDeliveries();
  for (const audit::AcknowledgedSale& a : acknowledged_) {
    if (delivered_.count(a.n) == 0) ++run->backlog;
  }
  child->Kill();
  run->killed = true;
  run->exit_code = child->exit_code();
  // Lines the simulator wrote before it died are acknowledgements too.
  std::string line;
  while (bad->ok() &&
         child->ReadLine(absl::Now(), &line) == ChildProcess::Read::kLine) {
    RecordLine(line, run, /*after_kill=*/true, drained, bad);
  }
}

absl::Status PosSimSoak::SettlePhase(bool drained, SoakRun* run) {
  // The store tells what the output cannot: whether a sale was committed
  // whose line the kill cut off. The simulator is dead, so a read-only
  // open sees everything it wrote.
  Options options;
  options.tables = {kTable};
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::OpenReadOnly(options, options_.dir + "/db");
  int64_t counter = 0;
  absl::StatusOr<std::string> value =
      store.ok() ? (*store)->Get(kTable, kNextSaleKey) : store.status();
  if (value.ok() ? !absl::SimpleAtoi(*value, &counter)
                 : !absl::IsNotFound(value.status())) {
    return absl::InternalError(absl::StrCat(
        "after run ", run->index, ", reading the next-sale counter: ",
        value.ok() ? *value : value.status().ToString()));
  }
  run->committed = counter - counter_;
  counter_ = counter;
  const int64_t printed = run->lines + run->lines_after_kill;
  run->phase = !run->killed               ? KillPhase::kNotKilled
               : drained                  ? KillPhase::kAfterDrained
               : run->committed > printed ? KillPhase::kCommittedUnprinted
               : printed == 0             ? KillPhase::kStarting
               : printed < run->to_make   ? KillPhase::kCommitting
                                          : KillPhase::kDelivering;
  return absl::OkStatus();
}

absl::Status PosSimSoak::Watch(ChildProcess* child, absl::Time kill_at,
                               SoakRun* run, bool* drained, bool* exited) {
  absl::Time last_progress = absl::Now();
  int64_t delivered = PollDeliveries();
  absl::Status bad;
  std::string line;
  while (bad.ok()) {
    const absl::Time now = absl::Now();
    if (now >= kill_at) break;
    if (now - last_progress > options_.stall_timeout) {
      return absl::DeadlineExceededError(
          absl::StrCat("run ", run->index, " made no progress for ",
                       absl::FormatDuration(options_.stall_timeout)));
    }
    const ChildProcess::Read got =
        child->ReadLine(std::min(kill_at, now + absl::Milliseconds(20)), &line);
    if (got == ChildProcess::Read::kEof) {
      run->exit_code = child->Wait(absl::Now() + absl::Seconds(30));
      *exited = true;
      break;
    }
    if (got == ChildProcess::Read::kLine) {
      RecordLine(line, run, /*after_kill=*/false, drained, &bad);
      last_progress = absl::Now();
      if (kill_at == absl::InfiniteFuture()) {
        kill_at = KillTime(*run, last_progress, *drained);
      }
    }
    const int64_t now_delivered = PollDeliveries();
    if (now_delivered > delivered) last_progress = absl::Now();
    delivered = now_delivered;
  }
  return bad;
}

absl::Status PosSimSoak::RunOnce(int64_t new_sales, KillPlan plan) {
  // Plans that wait for sale lines need sales to make.
  const int64_t min_to_make =
      plan == KillPlan::kBetweenSales || plan == KillPlan::kDuringCommit ? 2
      : plan == KillPlan::kAfterLastSale                                 ? 1
                                                                         : 0;
  sales_flag_ = std::max(sales_flag_ + new_sales, counter_ + min_to_make);
  SoakRun run;
  run.index = static_cast<int>(runs_.size()) + 1;
  run.sales_flag = sales_flag_;
  run.plan = plan;
  run.to_make = sales_flag_ - counter_;
  run.plan_arg = DrawPlanArg(plan, run.to_make);
  std::ofstream(stderr_path_, std::ios::app)
      << "=== run " << run.index << ": --sales " << sales_flag_ << ", kill "
      << KillPlanName(plan) << " " << run.plan_arg << "\n";

  auto child = ChildProcess::Start(
      TargetCommand(options_.pos_sim_binary, Args(plan)), stderr_path_);
  if (!child.ok()) return child.status();
  const absl::Time start = absl::Now();
  bool drained = false;
  bool exited = false;
  absl::Status bad = Watch(child->get(),
                           plan == KillPlan::kAtStartup
                               ? start + absl::Milliseconds(run.plan_arg)
                               : absl::InfiniteFuture(),
                           &run, &drained, &exited);
  if (!exited) {
    KillAndCollect(child->get(), &drained, &run, &bad);
  } else if (bad.ok() && (run.exit_code != 0 || !drained)) {
    bad = absl::InternalError(
        absl::StrCat("run ", run.index, " exited with ", run.exit_code,
                     drained ? "" : " without printing \"drained\""));
  }
  child->reset();
  if (bad.ok()) bad = SettlePhase(drained, &run);
  if (run.killed) ++landed_[run.phase];
  run.lifetime = absl::Now() - start;
  runs_.push_back(run);
  return bad;
}

bool PosSimSoak::WaitDelivered(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (PollDeliveries() < sales_flag_) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

audit::AuditInput PosSimSoak::Input() {
  PollDeliveries();
  audit::AuditInput input;
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
