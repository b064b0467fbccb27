// Copyright (c) edge-outbox authors.

#include "tests/vm/power_cut_soak.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "examples/pos_sim/pos_sim_sale.h"
#include "outbox/store.h"
#include "tests/testing/sink_process.h"
#include "tests/vm/board.h"
#include "tools/audit/sink_log_tail.h"

namespace outbox::vm {
namespace {

constexpr char kTill[] = "till-1";
constexpr char kSay[] = "outbox-vm: ";
// How often kMidAcknowledgement reads the sink's log meanwhile, and a
// kInFlush cut asks the disk whether it holds unflushed writes.
constexpr absl::Duration kPoll = absl::Milliseconds(5);
// The in_flush plan's k is at most this: with every FLUSH held, each
// commit takes kInFlushHold.
constexpr int64_t kInFlushMaxSales = 5;

// An event id as the store makes them (a UUID): a console line torn or
// mixed with a kernel message would not pass, and must not count as an
// acknowledgement of a wrong id.
bool IsEventId(const std::string& id) {
  return id.size() == 36 && std::all_of(id.begin(), id.end(), [](char c) {
           return c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream data;
  data << in.rdbuf();
  return data.str();
}

}  // namespace

const char* CutPlanName(CutPlan plan) {
  switch (plan) {
    case CutPlan::kAnyTime:
      return "any_time";
    case CutPlan::kAfterSale:
      return "after_sale";
    case CutPlan::kMidDelivery:
      return "mid_delivery";
    case CutPlan::kAfterDrained:
      return "after_drained";
    case CutPlan::kMidAcknowledgement:
      return "mid_acknowledgement";
    case CutPlan::kInFlush:
      return "in_flush";
    case CutPlan::kNone:
      return "none";
  }
  return "?";
}

absl::StatusOr<std::vector<CutPlan>> ParseCutPlans(absl::string_view names) {
  constexpr CutPlan kPlans[] = {CutPlan::kAnyTime,
                                CutPlan::kAfterSale,
                                CutPlan::kMidDelivery,
                                CutPlan::kAfterDrained,
                                CutPlan::kMidAcknowledgement,
                                CutPlan::kInFlush};
  std::vector<CutPlan> plans;
  for (absl::string_view name : absl::StrSplit(names, ',', absl::SkipEmpty())) {
    const CutPlan* found =
        std::find_if(std::begin(kPlans), std::end(kPlans),
                     [&](CutPlan p) { return name == CutPlanName(p); });
    if (found == std::end(kPlans)) {
      return absl::InvalidArgumentError(
          absl::StrCat("no cut plan \"", name, "\""));
    }
    plans.push_back(*found);
  }
  if (plans.empty()) return absl::InvalidArgumentError("no cut plan given");
  return plans;
}

PowerCutSoak::PowerCutSoak(PowerCutOptions options)
    : options_(std::move(options)),
      rng_(options_.seed),
      platter_(options_.dir + "/disk.img"),
      sink_log_(options_.dir + "/sink.log") {}

absl::Status PowerCutSoak::MakeDisk() {
  std::filesystem::remove(platter_);
  std::filesystem::remove(sink_log_);
  std::ofstream(platter_).close();
  std::filesystem::resize_file(platter_, uint64_t{128} << 20);
  // 4 KiB blocks: ext4's block is the disk's sector (board.cc).
  absl::StatusOr<sink::ExitResult> mkfs =
      sink::RunToExit(options_.tools.mkfs, options_.dir,
                      {"-F", "-q", "-b", "4096", platter_}, absl::Seconds(60));
  if (!mkfs.ok()) return mkfs.status();
  if (mkfs->exit_code != 0) {
    return absl::InternalError(absl::StrCat("mkfs.ext4: ", mkfs->err));
  }
  return absl::OkStatus();
}

absl::Status PowerCutSoak::Run() {
  OUTBOX_RETURN_IF_ERROR(MakeDisk());
  int cuts = 0;
  // A boot can power off before its plan's moment (a late any_time draw);
  // it is no cut, so more boots follow, up to twice the cuts, and the next
  // one tries the same plan again: the plans go in turn by cuts, so a run
  // of at least as many cuts as plans cuts in each.
  for (size_t i = 0;
       cuts < options_.cuts && i < 2 * static_cast<size_t>(options_.cuts);
       ++i) {
    OUTBOX_RETURN_IF_ERROR(RunBoot(
        options_.plans[static_cast<size_t>(cuts) % options_.plans.size()],
        false));
    if (boots_.back().cut) ++cuts;
  }
  return RunBoot(CutPlan::kNone, true);
}

int64_t PowerCutSoak::DrawPlanArg(CutPlan plan, int64_t to_make) {
  switch (plan) {
    case CutPlan::kAnyTime:
      return absl::Uniform<int64_t>(
          rng_, 0, absl::ToInt64Milliseconds(mean_boot_) + 3000);
    case CutPlan::kAfterSale:
    case CutPlan::kMidAcknowledgement:
      return absl::Uniform<int64_t>(absl::IntervalClosed, rng_, 1,
                                    std::max<int64_t>(to_make, 1));
    case CutPlan::kInFlush:  // a commit follows the k-th; each is slow
      return absl::Uniform<int64_t>(
          absl::IntervalClosed, rng_, 1,
          std::clamp<int64_t>(to_make - 1, 1, kInFlushMaxSales));
    case CutPlan::kMidDelivery:
      return absl::Uniform(rng_, 0, 301);
    case CutPlan::kAfterDrained:
      return absl::Uniform(rng_, 0, 501);
    case CutPlan::kNone:
      return 0;
  }
  return 0;
}

std::string PowerCutSoak::BootFile(int index, const char* suffix) const {
  return absl::StrCat(options_.dir, "/boot-", index, suffix);
}

std::vector<std::string> PowerCutSoak::KernelArgs() const {
  std::vector<std::string> args = {
      absl::StrCat("outbox_sales=", sales_flag_),
      absl::StrCat("outbox_rate=", options_.rate),
      absl::StrCat("outbox_seed=", options_.seed + boots_.size())};
  if (!options_.fsync) args.push_back("outbox_no_sync=1");
  return args;
}

Boot PowerCutSoak::PlanBoot(CutPlan plan) {
  Boot boot;
  boot.index = static_cast<int>(boots_.size());
  boot.mode = options_.modes[boots_.size() % options_.modes.size()];
  boot.plan = plan;
  sales_flag_ += absl::Uniform(absl::IntervalClosed, rng_, 3,
                               std::max(options_.max_new_sales, 3));
  boot.sales_flag = sales_flag_;
  boot.plan_arg = DrawPlanArg(plan, sales_flag_ - counter_);
  if (plan == CutPlan::kAfterSale) {
    boot.delay_ms =
        absl::Uniform<int64_t>(absl::IntervalClosed, rng_, 0,
                               static_cast<int64_t>(1000 / options_.rate) + 30);
  }
  if (plan == CutPlan::kMidAcknowledgement) {
    boot.delay_ms = absl::Uniform(absl::IntervalClosed, rng_, 0, 100);
  }
  if (plan == CutPlan::kInFlush) {
    // The next commit starts 1/rate s after the line and its FLUSH is then
    // held kInFlushHold: well inside it.
    boot.delay_ms = absl::Uniform(absl::IntervalClosed, rng_, 100, 300);
  }
  return boot;
}

absl::Status PowerCutSoak::RunBoot(CutPlan plan, bool final_boot) {
  Boot boot = PlanBoot(plan);
  auto disk = LossyDiskProcess::Start(
      options_.disk_binary, platter_,
      {"--mode=" + boot.mode, absl::StrCat("--seed=", rng_()),
       absl::StrCat("--flush-ms=", plan == CutPlan::kInFlush
                                       ? absl::ToInt64Milliseconds(kInFlushHold)
                                       : options_.flush_ms)},
      options_.dir + "/disk.err");
  if (!disk.ok()) return disk.status();
  BoardConfig config = options_.board;
  config.disk_url = (*disk)->Url();
  config.serial1_path = BootFile(boot.index, ".ttyS1");
  config.stderr_path = options_.dir + "/qemu.err";
  config.kernel_args = KernelArgs();
  console_.open(BootFile(boot.index, ".console"));
  started_ = absl::Now();
  auto board = Board::Boot(config);
  if (!board.ok()) return board.status();
  const absl::Status watched = CutAndCollect(board->get(), disk->get(), &boot);
  const absl::Status settled = Settle(disk->get(), config.serial1_path, &boot);
  if (boot.boot_time > absl::ZeroDuration()) {
    mean_boot_ = (3 * mean_boot_ + boot.boot_time) / 4;  // aims any_time
  }
  boots_.push_back(boot);
  OUTBOX_RETURN_IF_ERROR(watched);
  OUTBOX_RETURN_IF_ERROR(settled);
  if (final_boot && (boot.cut || boot.last_console != "outbox-vm: halt done")) {
    return absl::InternalError(absl::StrCat(
        "the final boot did not drain and power off; its last line: \"",
        boot.last_console, "\" (", BootFile(boot.index, ".console"), ")"));
  }
  return absl::OkStatus();
}

absl::Status PowerCutSoak::CutAndCollect(Board* board, LossyDiskProcess* disk,
                                         Boot* boot) {
  absl::Status watched = Watch(board, disk, boot);
  if (!board->exited()) {
    board->Cut();
    boot->cut = true;
  }
  boot->life = absl::Now() - started_;
  // What qemu had passed on before it died is on the console: those
  // lines were acknowledged too.
  std::string line;
  absl::Time ignored = absl::InfiniteFuture();
  while (board->ReadConsole(absl::InfinitePast(), &line) ==
         ChildProcess::Read::kLine) {
    absl::Status parsed = OnLine(line, absl::Now(), boot, &ignored);
    if (watched.ok()) watched = parsed;
  }
  console_.close();
  return watched;
}

absl::Status PowerCutSoak::Watch(Board* board, LossyDiskProcess* disk,
                                 Boot* boot) {
  absl::Time cut_at = boot->plan == CutPlan::kAnyTime
                          ? started_ + absl::Milliseconds(boot->plan_arg)
                          : absl::InfiniteFuture();
  // The sink's answers are on ttyS1, not the console: polled every 5 ms.
  const bool poll_answers = boot->plan == CutPlan::kMidAcknowledgement;
  audit::SinkLogTail answers(BootFile(boot->index, ".ttyS1"));
  absl::Time last_output = absl::Now();
  absl::Time moment = absl::InfiniteFuture();  // when cut_at first passed
  while (true) {
    if (poll_answers) WatchAnswers(&answers, *boot, &cut_at);
    std::string line;
    const absl::Time stalled = last_output + options_.stall_timeout;
    absl::Time deadline = std::min(cut_at, stalled);
    if (poll_answers) deadline = std::min(deadline, absl::Now() + kPoll);
    const ChildProcess::Read read = board->ReadConsole(deadline, &line);
    const absl::Time now = absl::Now();
    if (read == ChildProcess::Read::kLine) {
      last_output = now;
      OUTBOX_RETURN_IF_ERROR(OnLine(line, now, boot, &cut_at));
    } else if (read == ChildProcess::Read::kEof) {
      board->Wait(now + absl::Seconds(10));  // it powered off
      return absl::OkStatus();
    } else if (now >= cut_at) {
      if (moment == absl::InfiniteFuture()) moment = now;
      absl::StatusOr<bool> came = MomentCame(disk, *boot, moment, &cut_at);
      if (!came.ok() || *came) return came.status();
    } else if (now >= stalled) {
      return absl::DeadlineExceededError(
          absl::StrCat("boot ", boot->index, " printed nothing for ",
                       absl::FormatDuration(options_.stall_timeout),
                       "; last line \"", boot->last_console, "\""));
    }
  }
}

absl::StatusOr<bool> PowerCutSoak::MomentCame(LossyDiskProcess* disk,
                                              const Boot& boot,
                                              absl::Time moment,
                                              absl::Time* cut_at) {
  if (boot.plan != CutPlan::kInFlush) return true;
  absl::StatusOr<DiskLine> counts = disk->Counts();
  if (!counts.ok()) return counts.status();
  const absl::Time now = absl::Now();
  if ((*counts)["unflushed"] > 0 || now - moment >= kInFlushWait) return true;
  *cut_at = now + kPoll;
  return false;
}

void PowerCutSoak::WatchAnswers(audit::SinkLogTail* answers, const Boot& boot,
                                absl::Time* cut_at) {
  if (*cut_at != absl::InfiniteFuture()) return;
  answers->Poll();
  int64_t answered = 0;
  for (const audit::SinkRequest& request : answers->requests()) {
    answered += request.ok() ? 1 : 0;  // a dropped answer has status 0
  }
  if (answered >= boot.plan_arg) {
    *cut_at = absl::Now() + absl::Milliseconds(boot.delay_ms);
  }
}

absl::Status PowerCutSoak::OnLine(const std::string& line, absl::Time at,
                                  Boot* boot, absl::Time* cut_at) {
  console_ << line << "\n";
  if (line == "drained") {
    boot->last_console = line;
    if (boot->plan == CutPlan::kAfterDrained) {
      *cut_at = at + absl::Milliseconds(boot->plan_arg);
    }
    return absl::OkStatus();
  }
  if (absl::StartsWith(line, kSay)) {
    boot->last_console = line;
    if (line == "outbox-vm: sink-ready") boot->boot_time = at - started_;
    if (absl::StartsWith(line, "outbox-vm: pos-sim-exit ") &&
        line != "outbox-vm: pos-sim-exit 0") {
      return absl::InternalError(
          absl::StrCat("boot ", boot->index, ": outbox-pos-sim failed (",
                       BootFile(boot->index, ".console"), " has its stderr)"));
    }
    if (absl::StartsWith(line, "outbox-vm: halt ") &&
        line != "outbox-vm: halt done") {
      return absl::InternalError(absl::StrCat(
          "boot ", boot->index, ": the guest said \"", line, "\""));
    }
    return absl::OkStatus();
  }
  if (!absl::StartsWith(line, "sale ")) return absl::OkStatus();  // kernel
  const std::vector<std::string> parts = absl::StrSplit(line, ' ');
  const std::string till = absl::StrCat(kTill, "-");
  int64_t n = -1;
  if (parts.size() != 3 || !absl::StartsWith(parts[1], till) ||
      !absl::SimpleAtoi(parts[1].substr(till.size()), &n) ||
      !IsEventId(parts[2])) {
    return absl::InternalError(
        absl::StrCat("boot ", boot->index, " printed \"", line, "\""));
  }
  acknowledged_.push_back({n, parts[2], boot->index});
  ++boot->lines;
  if ((boot->plan == CutPlan::kAfterSale || boot->plan == CutPlan::kInFlush) &&
      boot->lines == boot->plan_arg) {
    *cut_at = at + absl::Milliseconds(boot->delay_ms);
  }
  if (boot->plan == CutPlan::kMidDelivery && n == boot->sales_flag - 1) {
    *cut_at = at + absl::Milliseconds(boot->plan_arg);
  }
  return absl::OkStatus();
}

absl::Status PowerCutSoak::Settle(LossyDiskProcess* disk,
                                  const std::string& serial1, Boot* boot) {
  // qemu is dead: the cut applies the mode to what the guest left
  // unflushed, and Stop's last cut finds nothing more.
  absl::StatusOr<DiskLine> cut = disk->Cut();
  if (!cut.ok()) return cut.status();
  boot->disk = *cut;
  absl::StatusOr<DiskLine> stopped = disk->Stop();
  if (!stopped.ok()) return stopped.status();
  CollectSinkLog(serial1, boot);

  absl::StatusOr<ImageCheck> image =
      CheckImage(options_.tools, platter_, options_.dir + "/check");
  if (!image.ok()) {
    return absl::DataLossError(absl::StrCat("after boot ", boot->index, ": ",
                                            image.status().message()));
  }
  boot->image = *image;
  Options store_options;
  store_options.tables = {pos_sim::kTable};
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::OpenReadOnly(store_options, image->store);
  if (!store.ok()) {
    return absl::DataLossError(absl::StrCat(
        "after boot ", boot->index, " the store does not reopen: ",
        store.status().ToString(), "; e2fsck said:\n", image->fsck_output));
  }
  absl::StatusOr<std::string> counter =
      (*store)->Get(pos_sim::kTable, pos_sim::kNextSaleKey);
  if (counter.ok() ? !absl::SimpleAtoi(*counter, &counter_)
                   : !absl::IsNotFound(counter.status())) {
    return absl::DataLossError(absl::StrCat(
        "after boot ", boot->index, " the counter cannot be read: ",
        counter.ok() ? *counter : counter.status().ToString()));
  }
  if (!counter.ok()) counter_ = 0;
  boot->counter = counter_;
  return absl::OkStatus();
}

void PowerCutSoak::CollectSinkLog(const std::string& serial1, Boot* boot) {
  // The sink drains each line out of the port before it answers
  // (request_log.h), so a torn last line is a request nobody saw answered.
  const std::string data = ReadWhole(serial1);
  const size_t end = data.rfind('\n');
  const size_t whole = end == std::string::npos ? 0 : end + 1;
  boot->torn_log_lines = whole < data.size() ? 1 : 0;
  std::ofstream(sink_log_, std::ios::app | std::ios::binary)
      << data.substr(0, whole);
}

audit::AuditInput PowerCutSoak::Input() const {
  audit::SinkLogTail tail(sink_log_);
  tail.Poll();
  audit::AuditInput input;
  input.till = kTill;
  input.sales = sales_flag_;
  input.acknowledged = acknowledged_;
  input.requests = tail.requests();
  return input;
}

std::string PowerCutSoak::FinalStore() const {
  return boots_.empty() ? "" : boots_.back().image.store;
}

}  // namespace outbox::vm
