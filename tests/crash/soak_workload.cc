// Copyright (c) edge-outbox authors.
//
// What a power-cut soak cycle does while the power is on: commits (one at a
// time and from several threads at once), agent rounds, replays, purges and
// wall-clock jumps, each followed by a drain.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/crash_points.h"
#include "tests/crash/power_cut_soak_impl.h"
#include "tests/crash/soak_burst.h"
#include "tests/crash/soak_txns.h"

namespace outbox::testing {
namespace {

// A drain gives the agent one round per pending event (an ordering key's
// events go one per round) and this many more: a probe of a destination
// marked unreachable, events committed to be delivered up to 4 s later.
constexpr size_t kDrainSlack = 6;

}  // namespace

std::string SoakAgentConfig() {
  return absl::StrCat(SoakWorkflowConfig(), R"(
    destinations { name: "r" url: "http://receiver.test/" }
    routes { event_type: "*" destination: "r" }
    retry {
      base_delay: "100ms" max_delay: "1s" max_retry_after: "1s"
      max_attempts: )",
                      kSoakMaxAttempts, R"(
    }
    agent {
      max_in_flight: 8
      probe_interval_min: "100ms"
      probe_interval_max: "1s"
      dead_letter_retention: "0"
      workflow_retention: "0"
      # The soak sets the wall clock back six years and checks that nothing
      # stalls: the schedule's independence from the wall clock. The hold a
      # clock behind the store's newest time puts on HTTP by default would
      # hide that; it has its own tests (agent_field_test).
      clock_tolerance: "0"
    }
  )");
}

void PowerCutSoak::Record(size_t index,
                          const absl::StatusOr<CommitResult>& result,
                          absl::Time now, int cycle, bool power_on) {
  model_.OnCommit(index, result, ++commit_order_, now, cycle, power_on,
                  &violations_);
  if (!result.ok()) {
    ++report_.commits_failed;
  } else if (result->duplicate) {
    ++report_.duplicates;
  } else {
    ++report_.commits_ok;
  }
}

void PowerCutSoak::Commit(size_t index, int cycle) {
  // The store clock: what the idempotency window runs on.
  const absl::Time now = observed_->StoreClockNow();
  absl::StatusOr<CommitResult> result =
      observed_->Commit(model_.txn(index).txn);
  Record(index, result, now, cycle, Alive());
}

void PowerCutSoak::Burst(int cycle) {
  const absl::Time now = clock_.Now();  // no clock moves during the burst
  const absl::Time store_now = observed_->StoreClockNow();
  const int threads = Uniform(2, kSoakOrderingKeys);
  std::vector<std::vector<BurstCommit>> shares(threads);
  for (int t = 0; t < threads; ++t) {
    for (int n = Uniform(1, 3); n > 0; --n) {
      BurstCommit c;
      c.index = model_.Add(MakeSoakTxn(next_serial_++, now, store_now,
                                       kSoakIdempotencyWindow, model_, &gen_,
                                       OrderingKeySlot{t, threads}));
      shares[t].push_back(std::move(c));
    }
  }
  // Only once every Add is done: Add may move the model's transactions.
  for (std::vector<BurstCommit>& share : shares) {
    for (BurstCommit& c : share) c.txn = &model_.txn(c.index).txn;
  }
  const uint64_t groups = cut_.passages(internal::kGroupBeforeWrite);
  const uint64_t written = cut_.passages(internal::kCommitBeforeWrite);
  cut_.OnBurst();
  FaultInjectionFileSystem* fs = fs_.get();
  CommitFromThreads(
      observed_.get(), [fs] { return !fs->IsDead(); }, &shares);
  cut_.OnBurstEnd();
  // Nothing else passes a crash point while the threads run.
  ++report_.bursts;
  report_.burst_groups += cut_.passages(internal::kGroupBeforeWrite) - groups;
  report_.burst_written +=
      cut_.passages(internal::kCommitBeforeWrite) - written;
  // Thread by thread, each in its call order: the order the model gives
  // these commits, which is each ordering key's true one (OrderingKeySlot).
  for (const std::vector<BurstCommit>& share : shares) {
    for (const BurstCommit& c : share) {
      ++report_.burst_commits;
      Record(c.index, c.result, store_now, cycle, c.power_on);
    }
  }
}

void PowerCutSoak::AgentRound() {
  if (agent_ == nullptr) return;
  clock_.Advance(kSoakRound);
  Expect(agent_->RunOnce(), "agent round");
}

void PowerCutSoak::ReplayOne() {
  absl::StatusOr<std::vector<DeadLetter>> dead =
      observed_->ListDeadLetters(SIZE_MAX);
  Expect(dead.status(), "listing dead letters");
  if (!dead.ok()) return;
  // A workflow's dead letter is resumed with RetryWorkflow, never replayed.
  dead->erase(
      std::remove_if(dead->begin(), dead->end(),
                     [this](const DeadLetter& d) {
                       return model_.workflows().IsWorkflowEvent(d.event.id);
                     }),
      dead->end());
  if (dead->empty()) return;
  const std::vector<std::string> ids = model_.SortBySerial(*dead);
  const std::string& id = ids[Uniform(0, static_cast<int>(ids.size()) - 1)];
  Expect(observed_->Replay(id), absl::StrCat("replaying ", id));
}

void PowerCutSoak::PurgeDeadLetters() {
  absl::StatusOr<std::vector<DeadLetter>> dead =
      observed_->ListDeadLetters(SIZE_MAX);
  Expect(dead.status(), "listing dead letters");
  if (!dead.ok()) return;
  // No clock moves between the listing and the purge: each dead letter's
  // dead_for is what the purge compares.
  const absl::Duration older_than = absl::Seconds(Uniform(0, 8));
  model_.AllowPurge(*dead, older_than);
  Expect(observed_->PurgeDeadLetters(older_than).status(),
         "purging dead letters");
}

void PowerCutSoak::JumpWallClock() {
  absl::Duration offset;
  if (clock_offset_ == absl::ZeroDuration()) {
    offset = Chance(0.5) ? kSoakClockJump : -kSoakClockJump;
  } else {
    offset = Chance(0.7) ? absl::ZeroDuration() : -clock_offset_;
  }
  const absl::Time before = clock_.Now();
  clock_.Set(before + (offset - clock_offset_));
  clock_offset_ = offset;
  ++report_.clock_jumps;
  drain_after_reopen_ = true;
  // The running agent and store, whose schedule is monotonic.
  Drain("right after the jump");
}

bool PowerCutSoak::Drain(absl::string_view when) {
  if (agent_ == nullptr) return false;
  absl::StatusOr<std::vector<PendingEvent>> pending =
      observed_->ListPending(SIZE_MAX);
  Expect(pending.status(), "listing pending events");
  if (!pending.ok() || !Alive()) return false;
  // One 2xx per pending event: each is sent once more at most, in flight
  // ones included, and none is committed or replayed meanwhile. A workflow
  // needs one per request it may still make, and a round for each and one
  // more to finish, and two for a step's sent mark and its drop at a cancel.
  size_t answers = 0;
  size_t rounds = kDrainSlack;
  for (const PendingEvent& e : *pending) {
    const bool workflow = e.type == kSoakWorkflowType;
    answers += workflow ? kSoakWorkflowRequests : 1;
    rounds += workflow ? kSoakWorkflowRequests + 3 : 1;
  }
  receiver_.Script(std::vector<Answer>(answers, Answer::kOk));
  for (size_t i = 0; i < rounds && Alive(); ++i) {
    AgentRound();
    absl::StatusOr<Stats> stats = observed_->GetStats();
    if (stats.ok() && stats->pending_events == 0) break;
  }
  receiver_.ClearScript();  // the rest of the cycle draws its answers
  absl::StatusOr<std::vector<PendingEvent>> left =
      observed_->ListPending(SIZE_MAX);
  if (!Alive()) return false;
  Expect(left.status(), "listing pending events");
  ++report_.drains;
  if (!left.ok() || left->empty()) return true;
  std::string detail =
      absl::StrCat(left->size(), " of ", pending->size(),
                   " events still pending ", when, ", after ", rounds,
                   " agent rounds with the receiver answering 2xx; the "
                   "wall clock at ",
                   absl::FormatTime(clock_.Now()), " (",
                   absl::FormatDuration(clock_offset_), " off):");
  for (const PendingEvent& e : *left) {
    absl::StrAppend(&detail, "\n    seq ", e.seq, " ", e.id, " key '",
                    e.ordering_key, "' created ", absl::FormatTime(e.created),
                    ", ", e.attempts, " attempt(s), last ",
                    absl::FormatTime(e.last_attempt), ", next ",
                    absl::FormatTime(e.next_attempt));
  }
  violations_.push_back({ViolationKind::kStalled, std::move(detail)});
  return true;
}

void PowerCutSoak::Workload(int cycle) {
  // A jump in the previous cycle: the reopen rebuilt the index from stored
  // wall-clock due times, as of the jumped clock.
  if (drain_after_reopen_ && Drain("after the reopen that followed a jump")) {
    drain_after_reopen_ = false;
  }
  // Then what an application does after a restart: commit again what it
  // cannot know to be committed. Found absent: it commits afresh with the
  // same ids. Found present (keyed): the store must answer a duplicate,
  // whatever the wall clock did (the window runs on the store clock).
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
  // Short runs (50 cycles on emulated boards) draw too few actions to be
  // sure of a burst or a jump: every kSoakForcedEvery cycles, one of each
  // comes first.
  if (Alive() && cycle % kSoakForcedEvery == 0) Burst(cycle);
  if (Alive() && cycle % kSoakForcedEvery == kSoakForcedEvery / 2) {
    JumpWallClock();
  }
  const int actions = Uniform(3, 9);
  for (int i = 0; i < actions && Alive(); ++i) {
    const double draw = std::uniform_real_distribution<double>(0, 1)(gen_);
    if (draw < 0.46) {
      const size_t index = model_.Add(
          MakeSoakTxn(next_serial_++, clock_.Now(), observed_->StoreClockNow(),
                      kSoakIdempotencyWindow, model_, &gen_));
      Commit(index, cycle);
    } else if (draw < 0.50) {
      Burst(cycle);
    } else if (draw < 0.81) {
      AgentRound();
    } else if (draw < 0.88) {
      ReplayOne();
    } else if (draw < 0.95) {
      PurgeDeadLetters();
    } else if (draw < 0.985) {
      Expect(observed_->PurgeExpiredIdempotencyKeys().status(),
             "purging idempotency keys");
    } else {
      JumpWallClock();
    }
  }
  for (int i = 0; i < 3 && Alive(); ++i) AgentRound();
}

}  // namespace outbox::testing
