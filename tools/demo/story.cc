// Copyright (c) edge-outbox authors.

#include "tools/demo/story.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "tools/demo/demo_files.h"
#include "tools/demo/wait.h"

namespace outbox::demo {
namespace {

constexpr absl::Duration kStoryStopGrace = absl::Seconds(5);
// How long a broker's subscriber may still be receiving after every till
// drained: only to catch one that lost messages (the audit then names them).
constexpr absl::Duration kReceiveTimeout = absl::Seconds(10);
// A held till runs this long at a time (DrainsInMilliseconds), then stays
// frozen until the receiver's log has been still for kSettle: what the
// broker acknowledged has then reached the recorder.
constexpr absl::Duration kSlice = absl::Milliseconds(1);
constexpr absl::Duration kSettle = absl::Milliseconds(50);

}  // namespace

Story::Story(DemoOptions options, Binaries binaries, Display* display,
             std::function<bool()> interrupted)
    : options_(std::move(options)),
      binaries_(std::move(binaries)),
      display_(display),
      interrupted_(std::move(interrupted)),
      dir_(std::filesystem::absolute(options_.dir).lexically_normal()) {}

Story::~Story() { StopAll(); }

absl::Status Story::Run() {
  const absl::Status status = RunSteps();
  // A Ctrl-C reaches the children too, and one may fail a step first.
  if (!status.ok() && interrupted_()) {
    return absl::CancelledError("interrupted");
  }
  return status;
}

absl::Status Story::RunSteps() {
  start_ = absl::Now();
  OUTBOX_RETURN_IF_ERROR(Prepare());
  OUTBOX_RETURN_IF_ERROR(StartTills());
  OUTBOX_RETURN_IF_ERROR(CommitOffline());
  OUTBOX_RETURN_IF_ERROR(BringReceiverUp());
  OUTBOX_RETURN_IF_ERROR(KillOneMidDrain());
  OUTBOX_RETURN_IF_ERROR(DrainAll());
  OUTBOX_RETURN_IF_ERROR(WaitAllReceived());
  OUTBOX_RETURN_IF_ERROR(StopReceiver());
  OUTBOX_RETURN_IF_ERROR(Audit());
  OUTBOX_RETURN_IF_ERROR(CheckStory());
  return RunSaga();
}

absl::Status Story::RunSaga() {
  if (options_.transport != Transport::kWebhook) {
    Event(absl::StrCat("saga chapter skipped with --transport ",
                       TransportName(options_.transport),
                       ": workflow steps are HTTP requests, one at a time; ",
                       "run without --transport to see it"));
    return absl::OkStatus();
  }
  saga_ = std::make_unique<SagaChapter>(
      options_,
      SagaBinaries{binaries_.sink, binaries_.pos_sim, binaries_.routes},
      display_, interrupted_, start_, dir_);
  return saga_->Run();
}

absl::Status Story::Prepare() {
  OUTBOX_RETURN_IF_ERROR(PrepareOutputDir(dir_));
  sink_log_ = dir_ + "/receiver.log";
  OUTBOX_ASSIGN_OR_RETURN(
      receiver_, MakeReceiver(options_, {dir_, sink_log_, binaries_.sink}));
  // The tills are configured for the receiver before it is up: connecting
  // is refused.
  OUTBOX_RETURN_IF_ERROR(receiver_->PrepareDown());
  std::vector<std::string> names;
  for (int i = 1; i <= options_.tills; ++i) {
    TillSpec spec;
    spec.name = absl::StrCat("till-", i);
    const std::string till_dir = absl::StrCat(dir_, "/", spec.name);
    std::filesystem::create_directories(till_dir);
    spec.db = till_dir + "/db";
    spec.config_path = till_dir + "/agent.textproto";
    spec.stderr_path = till_dir + "/pos-sim.err";
    spec.sales = options_.sales;
    spec.rate = options_.rate;
    OUTBOX_RETURN_IF_ERROR(
        WriteTextFile(spec.config_path,
                      TillConfigText(receiver_->DestinationText(spec.name))));
    names.push_back(spec.name);
    tills_.push_back(std::make_unique<Till>(binaries_.pos_sim, spec));
  }
  log_ = std::make_unique<ReceiverLog>(sink_log_, names);
  first_started_.assign(tills_.size(), absl::InfinitePast());
  seen_online_.assign(tills_.size(), false);
  meters_.assign(tills_.size(), RateMeter());
  victim_ = tills_.size() / 2;
  Event(absl::StrCat("stores, configs and logs in ", dir_));
  Event(receiver_->DownText());
  return absl::OkStatus();
}

absl::Status Story::StartTills() {
  for (size_t i = 0; i < tills_.size(); ++i) {
    OUTBOX_RETURN_IF_ERROR(tills_[i]->Start());
    first_started_[i] = tills_[i]->run_started();
  }
  Event(absl::StrCat(tills_.size(), " tills selling, ", options_.sales,
                     " sales each at ", options_.rate,
                     "/s, each into its own store (outbox-pos-sim)"));
  return absl::OkStatus();
}

absl::Status Story::CommitOffline() {
  const absl::Time up_at = absl::Now() + options_.offline;
  OUTBOX_RETURN_IF_ERROR(WaitUntil("committing offline", [&] {
    for (const auto& till : tills_) {
      if (static_cast<int64_t>(till->acknowledged().size()) < options_.sales) {
        return false;
      }
    }
    return absl::Now() >= up_at;
  }));
  Event(absl::StrCat("all ", options_.sales * options_.tills,
                     " sales committed while the receiver was down"));
  return absl::OkStatus();
}

absl::Status Story::BringReceiverUp() {
  if (receiver_->DrainsInMilliseconds()) {
    OUTBOX_RETURN_IF_ERROR(tills_[victim_]->Pause());
  }
  OUTBOX_RETURN_IF_ERROR(receiver_->BringUp());
  Event(receiver_->UpText());
  return absl::OkStatus();
}

absl::Status Story::KillOneMidDrain() {
  Till& till = *tills_[victim_];
  const TillTally& tally = log_->tally(victim_);
  const bool held = receiver_->DrainsInMilliseconds();
  if (held) {
    OUTBOX_RETURN_IF_ERROR(RunHeldTillIntoItsDrain());
  } else {
    const size_t quarter = static_cast<size_t>(std::max<int64_t>(
        1, static_cast<int64_t>(till.acknowledged().size()) / 4));
    OUTBOX_RETURN_IF_ERROR(WaitUntil("draining, before the kill", [&] {
      return tally.delivered.size() >= quarter || till.drained();
    }));
  }
  if (till.state() != Till::State::kRunning) {
    return absl::FailedPreconditionError(absl::StrCat(
        till.spec().name, " had drained and exited before the SIGKILL; run ",
        "with more --sales"));
  }
  OUTBOX_RETURN_IF_ERROR(till.Kill());
  const absl::Time killed_at = absl::Now();
  log_->Poll();
  const int64_t left = Pending(victim_);
  if (till.drained() || left <= 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the SIGKILL landed after ", till.spec().name,
                     " had drained, not in its drain; run with more --sales"));
  }
  Event(absl::StrCat("SIGKILL ", till.spec().name, " in the middle of its ",
                     "drain",
                     held ? " (held with SIGSTOP and let run 1 ms at a time, "
                            "since it would drain in milliseconds)"
                          : "",
                     ": ", tally.delivered.size(), " of ",
                     till.acknowledged().size(), " sales delivered"));
  OUTBOX_RETURN_IF_ERROR(WaitUntil("showing the killed till", [&] {
    return absl::Now() - killed_at > absl::Milliseconds(300);
  }));
  OUTBOX_RETURN_IF_ERROR(till.Start());
  Event(absl::StrCat("restarted ", till.spec().name, ": its store continues ",
                     "at sale ", options_.sales, ", its agent resends what ",
                     "was not acknowledged, under the same event ids"));
  return absl::OkStatus();
}

// The till to kill was frozen (SIGSTOP) before the receiver came up. It
// runs kSlice at a time; after each slice it stays frozen until the log is
// still, and once the receiver has some of its sales it is left frozen for
// the kill, which so lands in its drain however loaded the machine is. A
// slice that drained it all shows in KillOneMidDrain's checks.
absl::Status Story::RunHeldTillIntoItsDrain() {
  Till& till = *tills_[victim_];
  const TillTally& tally = log_->tally(victim_);
  bool settling = false;
  size_t seen = 0;
  absl::Time still_since;
  return WaitUntil("draining, before the kill", [&]() -> bool {
    if (!settling) {
      if (!till.Resume().ok()) return true;  // it exited: checked next
      absl::SleepFor(kSlice);
      if (!till.Pause().ok()) return true;
      settling = true;
      seen = tally.delivered.size();
      still_since = absl::Now();
      return false;
    }
    if (tally.delivered.size() != seen) {
      seen = tally.delivered.size();
      still_since = absl::Now();
      return false;
    }
    if (absl::Now() - still_since < kSettle) return false;
    settling = false;
    return seen > 0 || till.drained();
  });
}

absl::Status Story::DrainAll() {
  std::vector<bool> noted(tills_.size(), false);
  OUTBOX_RETURN_IF_ERROR(WaitUntil("draining", [&] {
    bool all = true;
    for (size_t i = 0; i < tills_.size(); ++i) {
      if (tills_[i]->drained() && !noted[i]) {
        noted[i] = true;
        Event(absl::StrCat(tills_[i]->spec().name, " drained: nothing ",
                           "pending in its store"));
      }
      all = all && tills_[i]->state() == Till::State::kExited;
    }
    return all;
  }));
  return absl::OkStatus();
}

// outbox-sink logs a request before it answers, so once every till drained
// its log is complete; a broker acknowledges a message before its
// subscriber has it, so the recorder may still be catching up. Every till
// ends with sales 0 to sales-1 committed.
absl::Status Story::WaitAllReceived() {
  const absl::Time deadline = absl::Now() + kReceiveTimeout;
  return WaitUntil("receiving what the tills delivered", [&] {
    if (absl::Now() > deadline) return true;
    for (size_t i = 0; i < tills_.size(); ++i) {
      if (static_cast<int64_t>(log_->tally(i).delivered.size()) <
          tills_[i]->spec().sales) {
        return false;
      }
    }
    return true;
  });
}

absl::Status Story::StopReceiver() {
  const absl::Status stopped = receiver_->Stop();
  log_->Poll();
  display_->EndLive();
  OUTBOX_RETURN_IF_ERROR(stopped);
  Event("every till drained and exited; receiver stopped");
  return absl::OkStatus();
}

absl::Status Story::Tick() {
  const absl::Time now = absl::Now();
  for (const auto& till : tills_) {
    OUTBOX_RETURN_IF_ERROR(till->Poll());
    OUTBOX_RETURN_IF_ERROR(till->ExitStatus());
  }
  log_->Poll();
  std::vector<TillLive> live;
  for (size_t i = 0; i < tills_.size(); ++i) {
    const TillTally& tally = log_->tally(i);
    meters_[i].Add(now, static_cast<int64_t>(tally.delivered.size()));
    const std::string state = StateOf(i);
    // A till whose drain took less than a tick is never seen "online";
    // its first request still tells when it was.
    if (!seen_online_[i] && tally.first_request != absl::InfiniteFuture()) {
      seen_online_[i] = true;
      Event(absl::StrCat(tills_[i]->spec().name, " online after ",
                         absl::FormatDuration(absl::Trunc(
                             tally.first_request - first_started_[i],
                             absl::Milliseconds(100))),
                         " offline"));
    }
    live.push_back({tills_[i]->spec().name, state, Pending(i),
                    static_cast<int64_t>(tally.delivered.size()),
                    meters_[i].PerSecond()});
  }
  display_->Live(now, FormatLiveLine(now - start_, live));
  return absl::OkStatus();
}

absl::Status Story::WaitUntil(absl::string_view step,
                              const std::function<bool()>& done) {
  Waiter waiter;
  waiter.interrupted = interrupted_;
  waiter.tick = [this] { return Tick(); };
  waiter.progress = [this] { return Progress(); };
  waiter.stall_timeout = options_.stall_timeout;
  waiter.logs = absl::StrCat("the tills' pos-sim.err and the receiver's ",
                             "sink-*.err in ", dir_);
  return demo::WaitUntil(waiter, step, done);
}

// Anything that moves: lines printed, requests received, runs started.
int64_t Story::Progress() const {
  int64_t sum = log_->strays();
  for (size_t i = 0; i < tills_.size(); ++i) {
    sum += static_cast<int64_t>(tills_[i]->acknowledged().size()) +
           static_cast<int64_t>(log_->tally(i).requests.size()) +
           tills_[i]->runs() + static_cast<int64_t>(tills_[i]->state());
  }
  return sum;
}

std::string Story::StateOf(size_t i) const {
  const Till& till = *tills_[i];
  switch (till.state()) {
    case Till::State::kNotStarted:
      return "offline";
    case Till::State::kKilled:
      return "killed";
    case Till::State::kExited:
      return "done";
    case Till::State::kRunning:
      break;
  }
  if (till.drained()) return "drained";
  // Online once the receiver has seen a request from this run.
  const bool reached = absl::FromUnixMillis(0) < log_->tally(i).last_request &&
                       log_->tally(i).last_request >= till.run_started();
  return reached ? "online" : "offline";
}

int64_t Story::Pending(size_t i) const {
  return std::max<int64_t>(
      0, static_cast<int64_t>(tills_[i]->acknowledged().size()) -
             static_cast<int64_t>(log_->tally(i).delivered.size()));
}

void Story::Event(absl::string_view text) {
  display_->Event(absl::Now() - start_, text);
}

void Story::StopAll() {
  saga_.reset();  // stops the saga's till and receiver
  for (const auto& till : tills_) till->Stop(kStoryStopGrace);
  receiver_.reset();
}

}  // namespace outbox::demo
