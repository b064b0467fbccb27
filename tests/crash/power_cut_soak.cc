// Copyright (c) edge-outbox authors.
//
// The power-cut soak's cycles: open, run the workload (soak_workload.cc),
// cut the power as planned, reopen, check.

#include "tests/crash/power_cut_soak.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/crash_points.h"
#include "tests/crash/power_cut_soak_impl.h"
#include "tests/crash/soak_disk.h"
#include "tests/crash/soak_records.h"
#include "tests/fault_fs/crash_test_env.h"

namespace outbox::testing {
namespace {

constexpr size_t kAgentLogLines = 12;

}  // namespace

PowerCutSoak::PowerCutSoak(const SoakOptions& options)
    : options_(options),
      gen_(options.seed),
      fs_(std::make_shared<FaultInjectionFileSystem>()),
      env_(NewCrashTestEnv(fs_)),
      receiver_(options.seed ^ 0x9e3779b97f4a7c15),
      model_(kSoakMaxAttempts),
      cut_(fs_.get()) {
  // Like the idempotent services a workflow calls: a step's resend gets
  // the answer it got first, so that a step in doubt can be resolved.
  receiver_.Deduplicate([this](const std::string& id) {
    const WorkflowModel::Request* r = model_.workflows().FindRequest(id);
    return r != nullptr && !r->revert;
  });
  store_options_.tables = {kSoakTable};
  store_options_.clock = &clock_;
  store_options_.idempotency_window = kSoakIdempotencyWindow;
  internal::TEST_SetCrashHook(
      [this](absl::string_view point) { cut_.OnPoint(point); });
}

PowerCutSoak::~PowerCutSoak() {
  internal::TEST_SetCrashHook(nullptr);
  agent_.reset();
  observed_.reset();
  store_.reset();
}

void PowerCutSoak::Expect(const absl::Status& s, absl::string_view what) {
  if (!s.ok() && Alive()) {
    violations_.push_back({ViolationKind::kUnexpectedError,
                           absl::StrCat(what, ": ", s.ToString())});
  }
}

absl::Status PowerCutSoak::OpenStore() {
  absl::StatusOr<std::unique_ptr<Store>> store =
      OpenStoreWithEnv(store_options_, dir_.Sub("db"), env_.get(),
                       /*read_only=*/false, options_.store_test);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  observed_ = std::make_unique<ObservedStore>(
      store_.get(), model_.acks(), [this] { return receiver_.log().size(); });
  return absl::OkStatus();
}

AgentOptions PoweredAgentOptions(std::string config_text, Receiver* receiver,
                                 FaultInjectionFileSystem* fs, Clock* clock) {
  AgentOptions options;
  options.config_text = std::move(config_text);
  options.transport = std::make_unique<RecordingTransport>(
      receiver, [fs] { return !fs->IsDead(); });
  options.watch_network = false;
  options.clock = clock;
  return options;
}

void PowerCutSoak::StartAgent() {
  AgentOptions options =
      PoweredAgentOptions(SoakAgentConfig(), &receiver_, fs_.get(), &clock_);
  options.log = [this](const LogRecord& r) {
    agent_log_.push_back(absl::StrCat(LogEventName(r.event), ": ", r.message));
    if (agent_log_.size() > kAgentLogLines) agent_log_.pop_front();
  };
  absl::StatusOr<std::unique_ptr<Agent>> agent = CreateAgentForTest(
      observed_.get(), std::move(options), options_.agent_test);
  Expect(agent.status(), "creating the agent");
  if (agent.ok()) agent_ = std::move(*agent);
}

void PowerCutSoak::PowerCut() {
  absl::Status s = fs_->SimulatePowerCut();
  if (!s.ok()) {
    violations_.push_back({ViolationKind::kUnexpectedError, s.ToString()});
    fatal_ = true;
  }
  fs_->Revive();
}

std::string PowerCutSoak::ShutDown(const CutPlan& plan) {
  agent_.reset();
  absl::Status closed = observed_->Close();
  observed_.reset();
  store_.reset();
  cut_.Disarm();
  std::string where;
  if (!fs_->IsDead()) {
    if (plan.kind == CutPlan::Kind::kNamed) {
      where = absl::StrCat(plan.point, " not reached");
    } else if (plan.kind == CutPlan::Kind::kFileOp) {
      where = "file op not reached";
    } else {
      where = "clean close";
    }
    Expect(closed, "closing the store");
  } else if (std::string fired = cut_.fired(); !fired.empty()) {
    where = fired;
  } else if (std::optional<FaultInjectionFileSystem::CrashPoint> cut =
                 fs_->crash_point()) {
    where = absl::StrCat("file op ", OpKindName(cut->kind));
  } else {
    where = "file system killed";
  }
  PowerCut();
  return where;
}

std::string PowerCutSoak::CutDuringReopen(const CutPlan& plan) {
  fs_->SetCrashAfterOps(plan.ops);
  absl::Status opened = OpenStore();
  if (store_ != nullptr) {
    // Not through observed_: this close covers none of the cycle's acks,
    // which went with the first cut.
    store_->Close().IgnoreError();
    observed_.reset();
    store_.reset();
  }
  std::string where = "reopen cut not reached";
  if (std::optional<FaultInjectionFileSystem::CrashPoint> cut =
          fs_->crash_point()) {
    where = absl::StrCat("file op ", OpKindName(cut->kind), " in reopen");
  } else if (!opened.ok()) {
    // This open was the first after the cycle's cut: failing, it is the
    // reopen that failed.
    violations_.push_back(
        {ViolationKind::kReopenFailed,
         absl::StrCat("reopen after the power cut (the cut planned in it "
                      "not reached): ",
                      opened.ToString())});
  }
  PowerCut();
  return where;
}

void PowerCutSoak::RunCycle(int cycle) {
  violations_.clear();
  const size_t receipts_before = receiver_.log().size();
  const CutPlan plan =
      DrawCutPlan(&gen_, options_.store_test.split_commit_batches,
                  ops_per_cycle_, ops_per_open_);
  cut_.Arm(plan);
  if (plan.kind == CutPlan::Kind::kFileOp) fs_->SetCrashAfterOps(plan.ops);
  const uint64_t ops_before = fs_->total_ops();
  StartAgent();
  Workload(cycle);
  std::string where = ShutDown(plan);
  const bool uncut =
      where == "clean close" || where.find("not reached") != std::string::npos;
  if (uncut) {
    ops_per_cycle_ = 0.9 * ops_per_cycle_ +
                     0.1 * static_cast<double>(fs_->total_ops() - ops_before);
  }
  if (plan.kind == CutPlan::Kind::kInReopen && !fatal_) {
    where = CutDuringReopen(plan);
  }
  ++report_.cuts[where];
  if (absl::StartsWith(where, "workflow.") &&
      where.find("not reached") == std::string::npos) {
    ++report_.workflows.cuts;
  }

  // Read before the store's open recounts anything (see soak_disk.h).
  absl::StatusOr<DiskState> disk =
      fatal_ ? absl::InternalError("power cut failed")
             : ReadDiskState(env_.get(), dir_.Sub("db"));
  const uint64_t open_before = fs_->total_ops();
  absl::Status opened = !disk.ok() ? disk.status() : OpenStore();
  if (!opened.ok()) {
    violations_.push_back(
        {ViolationKind::kReopenFailed,
         absl::StrCat("reopen after the power cut: ", opened.ToString())});
    fatal_ = true;
  } else {
    ops_per_open_ = 0.9 * ops_per_open_ +
                    0.1 * static_cast<double>(fs_->total_ops() - open_before);
    const bool last = cycle + 1 == options_.cycles;
    report_.events_checked +=
        model_.Check(store_.get(), *disk, receiver_.log(),
                     last ? SIZE_MAX : options_.rolling_checks, &violations_);
  }
  for (size_t i = receipts_before; i < receiver_.log().size(); ++i) {
    if (model_.workflows().FindRequest(receiver_.log()[i].webhook_id)) {
      ++report_.workflows.cycles;
      break;
    }
  }
  if (violations_.empty()) return;
  if (report_.violations.empty()) {
    report_.violation_cycle = cycle;
    report_.violation_cut = where;
    report_.agent_log.assign(agent_log_.begin(), agent_log_.end());
  }
  // Only an `until` run gets here twice; keep its report readable, but
  // never drop what it waits for.
  constexpr size_t kKeptViolations = 64;
  for (Violation& v : violations_) {
    if (report_.violations.size() >= kKeptViolations &&
        v.kind != options_.until) {
      continue;
    }
    report_.violations.push_back(std::move(v));
  }
}

bool PowerCutSoak::Done() const {
  if (fatal_) return true;
  if (report_.violations.empty()) return false;
  return !options_.until.has_value() || report_.HasViolation(*options_.until);
}

SoakReport PowerCutSoak::Run() {
  report_.seed = options_.seed;
  absl::Status opened = OpenStore();
  if (!opened.ok()) {
    report_.violations.push_back(
        {ViolationKind::kUnexpectedError,
         absl::StrCat("creating the store: ", opened.ToString())});
    return report_;
  }
  for (int cycle = 0; cycle < options_.cycles; ++cycle) {
    RunCycle(cycle);
    report_.cycles = cycle + 1;
    if (options_.progress_every > 0 &&
        report_.cycles % options_.progress_every == 0) {
      std::printf("  cycle %d of %d: %llu event checks\n", report_.cycles,
                  options_.cycles,
                  static_cast<unsigned long long>(report_.events_checked));
      std::fflush(stdout);
    }
    if (Done()) break;
  }
  report_.receipts = receiver_.log().size();
  report_.acks = model_.acks()->counts();
  WorkflowCounts workflows = model_.workflows().counts();
  workflows.cycles = report_.workflows.cycles;
  workflows.cuts = report_.workflows.cuts;
  report_.workflows = workflows;
  report_.passages = cut_.passages();
  if (store_ != nullptr) store_->Close().IgnoreError();
  store_.reset();
  return report_;
}

SoakReport RunPowerCutSoak(const SoakOptions& options) {
  return PowerCutSoak(options).Run();
}

}  // namespace outbox::testing
