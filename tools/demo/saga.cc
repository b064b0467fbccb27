// Copyright (c) edge-outbox authors.

#include "tools/demo/saga.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "examples/pos_sim/pos_sim_sale.h"
#include "tools/demo/demo_files.h"
#include "tools/demo/saga_files.h"
#include "tools/demo/wait.h"

namespace outbox::demo {
namespace {

constexpr absl::Duration kSagaStopGrace = absl::Seconds(5);
constexpr char kTillName[] = "saga";

std::string Percent(double rate) {
  return absl::StrFormat("%.0f%%", rate * 100);
}

}  // namespace

SagaChapter::SagaChapter(const DemoOptions& options, SagaBinaries binaries,
                         Display* display, std::function<bool()> interrupted,
                         absl::Time start, std::string dir)
    : options_(options),
      binaries_(std::move(binaries)),
      display_(display),
      interrupted_(std::move(interrupted)),
      start_(start),
      dir_(std::move(dir) + "/saga") {}

SagaChapter::~SagaChapter() {
  if (till_ != nullptr) till_->Stop(kSagaStopGrace);
  if (sink_ != nullptr) sink_->Stop().IgnoreError();
}

absl::Status SagaChapter::Run() {
  OUTBOX_RETURN_IF_ERROR(Prepare());
  OUTBOX_RETURN_IF_ERROR(StartReceiver());
  OUTBOX_RETURN_IF_ERROR(Sell());
  OUTBOX_RETURN_IF_ERROR(StopReceiver());
  OUTBOX_RETURN_IF_ERROR(Audit());
  return CheckStory();
}

absl::Status SagaChapter::Prepare() {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", dir_, ": ", ec.message()));
  }
  secret_path_ = dir_ + "/receiver.whsec";
  OUTBOX_RETURN_IF_ERROR(WriteSecretFile(secret_path_));
  log_ = std::make_unique<audit::SinkLogTail>(dir_ + "/receiver.log");
  pos_sim::SaleMix mix;
  mix.decline_every = options_.saga.decline_every;
  mix.refund_every = options_.saga.refund_every;
  for (int64_t n = 0; n < options_.saga.sales; ++n) {
    declines_ += pos_sim::IsDeclined(mix, n) ? 1 : 0;
    refunds_ += pos_sim::IsRefunded(mix, n) ? 1 : 0;
  }
  Event(absl::StrCat("saga: ", options_.saga.sales,
                     " sales, 4 steps each (reserve stock, fraud check, ",
                     "shipping, billing); ", declines_,
                     " will fail at billing, ", refunds_, " cancelled"));
  return absl::OkStatus();
}

absl::Status SagaChapter::StartReceiver() {
  const SagaOptions& o = options_.saga;
  OUTBOX_ASSIGN_OR_RETURN(
      sink_, sink::SinkProcess::Start(
                 {binaries_.sink, "--secret-file", secret_path_, "--log",
                  dir_ + "/receiver.log", "--routes", binaries_.routes,
                  "--fail-rate", absl::StrCat(o.fail_rate), "--drop-rate",
                  absl::StrCat(o.drop_rate), "--seed", absl::StrCat(o.seed)},
                 dir_, absl::Seconds(30)));
  Event(absl::StrCat("saga receiver up: outbox-sink on 127.0.0.1:",
                     sink_->port(), " plays seed 003's inventory, fraud ",
                     "check, shipping and billing (seed003_routes.json); ",
                     "answers ", Percent(o.fail_rate), " with 503, loses ",
                     Percent(o.drop_rate), " of its answers"));
  return absl::OkStatus();
}

absl::Status SagaChapter::Sell() {
  const SagaOptions& o = options_.saga;
  TillSpec spec;
  spec.name = kTillName;
  spec.db = dir_ + "/db";
  spec.config_path = dir_ + "/agent.textproto";
  spec.stderr_path = dir_ + "/pos-sim.err";
  spec.sales = o.sales;
  spec.rate = o.rate;
  spec.more_flags = {"--saga",          "per_step",
                     "--decline-every", absl::StrCat(o.decline_every),
                     "--refund-every",  absl::StrCat(o.refund_every)};
  OUTBOX_RETURN_IF_ERROR(WriteTextFile(
      spec.config_path, SagaTillConfigText({sink_->port(), secret_path_})));
  till_ = std::make_unique<Till>(binaries_.pos_sim, spec);
  OUTBOX_RETURN_IF_ERROR(till_->Start());
  Event(absl::StrCat("saga till selling: outbox-pos-sim --saga per_step ",
                     "(one payload member per step), its agent runs each ",
                     "sale's steps one after another"));
  Waiter waiter;
  waiter.interrupted = interrupted_;
  waiter.tick = [this] { return Tick(); };
  waiter.progress = [this] {
    return static_cast<int64_t>(till_->acknowledged().size() +
                                till_->refunded().size() +
                                log_->requests().size()) +
           static_cast<int64_t>(till_->state());
  };
  waiter.stall_timeout = options_.stall_timeout;
  waiter.logs = absl::StrCat("pos-sim.err and sink-*.err in ", dir_);
  OUTBOX_RETURN_IF_ERROR(WaitUntil(waiter, "saga: committing", [&] {
    return static_cast<int64_t>(till_->acknowledged().size()) >= o.sales;
  }));
  Event(absl::StrCat("saga: all ", o.sales, " sales committed"));
  OUTBOX_RETURN_IF_ERROR(WaitUntil(waiter, "saga: refunding", [&] {
    return static_cast<int64_t>(till_->refunded().size()) >= refunds_ ||
           till_->state() == Till::State::kExited;
  }));
  Event(absl::StrCat("saga: ", till_->refunded().size(), " completed sales ",
                     "refunded: Txn::Cancel in a later Txn, their steps to ",
                     "be reverted"));
  OUTBOX_RETURN_IF_ERROR(WaitUntil(waiter, "saga: draining", [&] {
    return till_->state() == Till::State::kExited;
  }));
  Event("saga till drained: every workflow finished");
  return absl::OkStatus();
}

absl::Status SagaChapter::StopReceiver() {
  const absl::Status stopped = sink_->StopCleanly();
  log_->Poll();
  display_->EndLive();
  OUTBOX_RETURN_IF_ERROR(stopped);
  Event("saga receiver stopped");
  return absl::OkStatus();
}

absl::Status SagaChapter::Tick() {
  OUTBOX_RETURN_IF_ERROR(till_->Poll());
  OUTBOX_RETURN_IF_ERROR(till_->ExitStatus());
  log_->Poll();
  const char* state = "selling";
  if (till_->state() == Till::State::kExited) {
    state = "done";
  } else if (static_cast<int64_t>(till_->acknowledged().size()) >=
             options_.saga.sales) {
    state = "draining";
  }
  const absl::Time now = absl::Now();
  display_->Live(now, FormatSagaLiveLine(
                          now - start_, state,
                          static_cast<int64_t>(till_->acknowledged().size()),
                          static_cast<int64_t>(till_->refunded().size()),
                          static_cast<int64_t>(log_->requests().size())));
  return absl::OkStatus();
}

void SagaChapter::Event(absl::string_view text) {
  display_->Event(absl::Now() - start_, text);
}

}  // namespace outbox::demo
