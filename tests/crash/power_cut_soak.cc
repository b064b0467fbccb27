// Copyright (c) edge-outbox authors.

#include "tests/crash/power_cut_soak.h"

#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/crash_points.h"
#include "outbox/agent.h"
#include "tests/crash/observed_store.h"
#include "tests/crash/soak_cut_plan.h"
#include "tests/crash/soak_disk.h"
#include "tests/crash/soak_records.h"
#include "tests/crash/soak_txns.h"
#include "tests/fault_fs/crash_test_env.h"
#include "tests/fault_fs/fault_injection_fs.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/recording_transport.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {
namespace {

// Retries, Retry-After and probes all wait at most 1s, and each agent round
// moves the clock 1.2s: whatever the agent's random jitter, everything
// waiting is due at the next round, so the seed alone decides what is sent.
// Four attempts make 5xx streaks end as dead letters now and then; dead
// letters are purged by the soak itself, never by the agent.
constexpr char kAgentConfig[] = R"(
  destinations { name: "r" url: "http://receiver.test/" }
  routes { event_type: "*" destination: "r" }
  retry {
    base_delay: "100ms" max_delay: "1s" max_attempts: 4 max_retry_after: "1s"
  }
  agent {
    max_in_flight: 8
    probe_interval_min: "100ms"
    probe_interval_max: "1s"
    dead_letter_retention: "0"
  }
)";
constexpr absl::Duration kRound = absl::Milliseconds(1200);
constexpr absl::Duration kIdempotencyWindow = absl::Hours(1);
constexpr size_t kAgentLogLines = 12;

// One soak run. Thread-compatible, driven by one thread; one per process at
// a time, because it owns the process-wide crash hook while it lives.
class PowerCutSoak {
 public:
  explicit PowerCutSoak(const SoakOptions& options);
  ~PowerCutSoak();
  SoakReport Run();

 private:
  absl::Status OpenStore();
  void StartAgent();
  void RunCycle(int cycle);
  void Workload(int cycle);
  void Commit(size_t index, int cycle);
  void AgentRound();
  void ReplayOne();
  void PurgeDeadLetters();
  // Ends the cycle's store and agent and cuts the power; returns where the
  // power went (see SoakReport::cuts).
  std::string ShutDown(const CutPlan& plan);
  std::string CutDuringReopen(const CutPlan& plan);
  void PowerCut();
  void OnCrashPoint(absl::string_view point);

  bool Alive() const { return !fs_->IsDead(); }
  bool Chance(double p) {
    return std::uniform_real_distribution<double>(0, 1)(gen_) < p;
  }
  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(gen_);
  }
  // Reports `s` unless it is OK or the power is already gone.
  void Expect(const absl::Status& s, absl::string_view what);

  const SoakOptions options_;
  std::mt19937_64 gen_;
  TempDir dir_;
  std::shared_ptr<FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  FakeClock clock_;
  Options store_options_;
  Receiver receiver_;
  SoakModel model_;
  std::unique_ptr<Store> store_;
  // store_ as the agent and the workload use it: tells model_ about acks.
  std::unique_ptr<ObservedStore> observed_;
  std::unique_ptr<Agent> agent_;
  std::deque<std::string> agent_log_;
  std::vector<Violation> violations_;  // of the current cycle
  bool fatal_ = false;                 // no store to go on with
  SoakReport report_;
  uint64_t next_serial_ = 0;
  uint64_t commit_order_ = 0;
  // Mutating file operations of an uncut cycle and of a reopen (moving
  // averages): the range file-operation cuts are drawn from.
  double ops_per_cycle_ = 60;
  double ops_per_open_ = 40;
  // The named cut of the current cycle; the hook runs on this thread,
  // inside store and agent calls.
  std::string armed_point_;
  int armed_passage_ = 0;
  int armed_passed_ = 0;
  std::string fired_point_;
};

PowerCutSoak::PowerCutSoak(const SoakOptions& options)
    : options_(options),
      gen_(options.seed),
      fs_(std::make_shared<FaultInjectionFileSystem>()),
      env_(NewCrashTestEnv(fs_)),
      receiver_(options.seed ^ 0x9e3779b97f4a7c15) {
  store_options_.tables = {kSoakTable};
  store_options_.clock = &clock_;
  store_options_.idempotency_window = kIdempotencyWindow;
  internal::TEST_SetCrashHook(
      [this](absl::string_view point) { OnCrashPoint(point); });
}

PowerCutSoak::~PowerCutSoak() {
  internal::TEST_SetCrashHook(nullptr);
  agent_.reset();
  observed_.reset();
  store_.reset();
}

void PowerCutSoak::OnCrashPoint(absl::string_view point) {
  ++report_.passages[std::string(point)];
  if (point != armed_point_ || ++armed_passed_ != armed_passage_) return;
  fired_point_ = std::string(point);
  armed_point_.clear();
  fs_->Kill();
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

void PowerCutSoak::StartAgent() {
  AgentOptions options;
  options.config_text = kAgentConfig;
  FaultInjectionFileSystem* fs = fs_.get();
  options.transport = std::make_unique<RecordingTransport>(
      &receiver_, [fs] { return !fs->IsDead(); });
  options.watch_network = false;
  options.clock = &clock_;
  options.log = [this](absl::string_view line) {
    agent_log_.emplace_back(line);
    if (agent_log_.size() > kAgentLogLines) agent_log_.pop_front();
  };
  absl::StatusOr<std::unique_ptr<Agent>> agent =
      Agent::Create(observed_.get(), std::move(options));
  Expect(agent.status(), "creating the agent");
  if (agent.ok()) agent_ = std::move(*agent);
}

void PowerCutSoak::Commit(size_t index, int cycle) {
  const uint64_t order = ++commit_order_;
  const absl::Time now = clock_.Now();
  absl::StatusOr<CommitResult> result =
      observed_->Commit(model_.txn(index).txn);
  model_.OnCommit(index, result, order, now, cycle, Alive(), &violations_);
  if (!result.ok()) {
    ++report_.commits_failed;
  } else if (result->duplicate) {
    ++report_.duplicates;
  } else {
    ++report_.commits_ok;
  }
}

void PowerCutSoak::AgentRound() {
  if (agent_ == nullptr) return;
  clock_.Advance(kRound);
  Expect(agent_->RunOnce(), "agent round");
}

void PowerCutSoak::ReplayOne() {
  absl::StatusOr<std::vector<DeadLetter>> dead =
      observed_->ListDeadLetters(SIZE_MAX);
  Expect(dead.status(), "listing dead letters");
  if (!dead.ok() || dead->empty()) return;
  const std::vector<std::string> ids = model_.SortBySerial(*dead);
  const std::string& id = ids[Uniform(0, static_cast<int>(ids.size()) - 1)];
  Expect(observed_->Replay(id), absl::StrCat("replaying ", id));
}

void PowerCutSoak::PurgeDeadLetters() {
  absl::StatusOr<std::vector<DeadLetter>> dead =
      observed_->ListDeadLetters(SIZE_MAX);
  Expect(dead.status(), "listing dead letters");
  if (!dead.ok()) return;
  const absl::Time cutoff = clock_.Now() - absl::Seconds(Uniform(0, 8));
  model_.AllowPurge(*dead, cutoff);
  Expect(observed_->PurgeDeadLetters(cutoff).status(), "purging dead letters");
}

void PowerCutSoak::Workload(int cycle) {
  // First what an application does after a restart: commit again what it
  // cannot know to be committed. Found absent: it commits afresh with the
  // same ids. Found present (keyed): the store must answer a duplicate.
  for (size_t index : model_.resolved_absent()) {
    if (Alive() && Chance(0.8)) {
      ++report_.retries;
      Commit(index, cycle);
    }
  }
  for (size_t index : model_.resolved_committed()) {
    if (Alive() && Chance(0.5)) {
      ++report_.retries;
      Commit(index, cycle);
    }
  }
  const int actions = Uniform(3, 9);
  for (int i = 0; i < actions && Alive(); ++i) {
    const double draw = std::uniform_real_distribution<double>(0, 1)(gen_);
    if (draw < 0.50) {
      const size_t index = model_.Add(MakeSoakTxn(
          next_serial_++, clock_.Now(), kIdempotencyWindow, model_, &gen_));
      Commit(index, cycle);
    } else if (draw < 0.82) {
      AgentRound();
    } else if (draw < 0.89) {
      ReplayOne();
    } else if (draw < 0.96) {
      PurgeDeadLetters();
    } else {
      Expect(observed_->PurgeExpiredIdempotencyKeys().status(),
             "purging idempotency keys");
    }
  }
  for (int i = 0; i < 3 && Alive(); ++i) AgentRound();
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
  armed_point_.clear();
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
  } else if (!fired_point_.empty()) {
    where = fired_point_;
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
  } else {
    Expect(opened, "opening the store");
  }
  PowerCut();
  return where;
}

void PowerCutSoak::RunCycle(int cycle) {
  violations_.clear();
  const CutPlan plan =
      DrawCutPlan(&gen_, options_.store_test.split_commit_batches,
                  ops_per_cycle_, ops_per_open_);
  fired_point_.clear();
  armed_passed_ = 0;
  if (plan.kind == CutPlan::Kind::kNamed) {
    armed_point_ = plan.point;
    armed_passage_ = plan.passage;
  } else if (plan.kind == CutPlan::Kind::kFileOp) {
    fs_->SetCrashAfterOps(plan.ops);
  }
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
  if (!violations_.empty()) {
    report_.violations = violations_;
    report_.violation_cycle = cycle;
    report_.violation_cut = where;
    report_.agent_log.assign(agent_log_.begin(), agent_log_.end());
  }
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
    if (!report_.violations.empty() || fatal_) break;
  }
  report_.receipts = receiver_.log().size();
  report_.acks = model_.acks()->counts();
  if (store_ != nullptr) store_->Close().IgnoreError();
  store_.reset();
  return report_;
}

}  // namespace

SoakReport RunPowerCutSoak(const SoakOptions& options) {
  return PowerCutSoak(options).Run();
}

}  // namespace outbox::testing
