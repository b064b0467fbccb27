// Copyright (c) edge-outbox authors.
//
// The agent's loop, what comes back: finished requests turned into
// settlements, one store write per round, the syncs that make them durable,
// and housekeeping.

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "agent/agent_impl.h"
#include "agent/decision.h"
#include "agent/retry/retry_policy.h"
#include "base/status_macros.h"
#include "lib/crash_points.h"

namespace outbox {

std::optional<AgentImpl::InFlight> AgentImpl::TakeFlight(uint64_t tag) {
  auto it = in_flight_.find(tag);
  if (it == in_flight_.end()) return std::nullopt;  // abandoned earlier
  InFlight flight = std::move(it->second);
  in_flight_.erase(it);
  in_flight_seqs_.erase(flight.event.seq);
  for (const PendingEvent& e : flight.batch_rest) in_flight_seqs_.erase(e.seq);
  reachability_.OnResult(flight.destination->name, flight.probe);
  return flight;
}

const RetryPolicy& AgentImpl::PolicyFor(const InFlight& flight,
                                        RetryPolicy* early) const {
  const Destination& destination = *flight.destination;
  if (test_.give_up_an_attempt_early && flight.workflow == nullptr) {
    // Broken on purpose: one attempt fewer than the policy allows.
    *early = destination.retry;
    early->max_attempts = std::max(1, early->max_attempts - 1);
    return *early;
  }
  return destination.retry;
}

void AgentImpl::HandleResult(const SendResult& result) {
  std::optional<InFlight> taken = TakeFlight(result.tag);
  if (!taken.has_value()) return;
  InFlight flight = *std::move(taken);
  const absl::Time now = clock_->Now();
  RetryPolicy early;
  const Decision d =
      Decide(result, flight.event, PolicyFor(flight, &early), now, bitgen_);
  // The receiver may have acted on it (or answered 2xx) and the store does
  // not know yet: a crash here means a resend with the same id.
  internal::CrashPoint(internal::kAgentAfterAnswer);
  if (d.kind == Decision::Kind::kOffline) {
    NoteNeverReached(flight, d);
    return;  // not an attempt: the event (or batch) is untouched
  }
  if (d.kind == Decision::Kind::kHoldDestination) {
    HoldRefused(flight, d);
    return;  // not an attempt either: the event (or batch) is untouched
  }
  metrics_.counts().OnAttempt(AttemptOutcome(result));
  if (!NoteAnswer(&flight, result, d, now)) return;  // the fuse holds it
  if (flight.workflow != nullptr && result.http.http_status != 0 &&
      (d.kind == Decision::Kind::kRetry ||
       d.kind == Decision::Kind::kPauseDestination)) {
    NoteNotDone(flight);  // the receiver answered: not done (yet)
  }
  ActOnDecision(flight, d, now);
  if (flight.workflow != nullptr) {
    settled_.push_back(
        SettleWorkflowAnswer(std::move(flight), d, result.http, now));
    return;
  }
  SettleBatchRest(&flight, result, now);
  settled_.push_back(SettlementFor(d, std::move(flight.event), now));
}

void AgentImpl::NoteNeverReached(const InFlight& flight, const Decision& d) {
  const Destination& destination = *flight.destination;
  const PendingEvent& event = flight.event;
  ++stats_.offline_results;
  if (reachability_.OnNeverReached(destination.name, flight.probe, Steady())) {
    Log(LogSeverity::kWarning, LogEvent::kDestinationUnreachable,
        absl::StrCat("destination ", destination.name,
                     " unreachable sending event ", event.id, " (", d.error,
                     "); holding its events, probing"),
        event.id, destination.name);
  }
  // Never reached: still not done if it was before (an earlier send of
  // the step may have reached the receiver, and this one says nothing).
  if (flight.workflow != nullptr && flight.workflow->was_not_done) {
    NoteNotDone(flight);
  }
}

void AgentImpl::ActOnDecision(const InFlight& flight, const Decision& d,
                              absl::Time now) {
  const Destination& destination = *flight.destination;
  const PendingEvent& event = flight.event;
  switch (d.kind) {
    case Decision::Kind::kRetry:
      Log(LogSeverity::kWarning, LogEvent::kRetryScheduled,
          absl::StrCat("event ", event.id, " to ", destination.name,
                       ": attempt ", event.attempts + 1, " failed (", d.error,
                       "); retry in ",
                       absl::FormatDuration(absl::Trunc(
                           d.next_attempt - now, absl::Milliseconds(1)))),
          event.id, destination.name);
      break;
    case Decision::Kind::kDeadLetter:
      Log(LogSeverity::kError, LogEvent::kDeadLetter,
          absl::StrCat("event ", event.id, " to ", destination.name,
                       " dead-lettered: ", d.error),
          event.id, destination.name);
      break;
    case Decision::Kind::kPauseDestination:
      reachability_.Pause(destination.name);
      Log(LogSeverity::kWarning, LogEvent::kDestinationPaused,
          absl::StrCat("destination ", destination.name, " paused by event ",
                       event.id, ": ", d.error),
          event.id, destination.name);
      break;
    default:
      break;
  }
}

void AgentImpl::HoldRefused(const InFlight& flight, const Decision& d) {
  const std::string& name = flight.destination->name;
  ++stats_.refused_results;
  metrics_.counts().OnAttempt(AgentMetrics::Outcome::kRefused);
  if (reachability_.OnRefused(name, flight.probe, Steady())) {
    Log(LogSeverity::kError, LogEvent::kDestinationRefused,
        absl::StrCat("destination ", name, " refused event ", flight.event.id,
                     " (", d.error,
                     "); fix its credential (secrets_file, header_files, "
                     "password_file), its ACL or the device's clock"),
        flight.event.id, name);
  }
  // Refused before the receiver looked at it: as for a request that never
  // reached it, the step is still not done only if it was before (an
  // earlier send may have been done, its answer lost).
  if (flight.workflow != nullptr && flight.workflow->was_not_done) {
    NoteNotDone(flight);
  }
}

bool AgentImpl::NoteAnswer(InFlight* flight, const SendResult& result,
                           const Decision& d, absl::Time now) {
  const Destination& destination = *flight->destination;
  const PendingEvent& event = flight->event;
  bool fuse_trips = false;
  if (FuseHolds(*flight, result, d, &fuse_trips)) {
    HoldForFuse(flight, d, now);
    TripFuse(*flight, result);
    return false;
  }
  if (d.kind == Decision::Kind::kDeadLetter) {
    dead_reasons_[event.seq] = d.rejected ? AgentMetrics::DeadReason::kRejected
                                          : AgentMetrics::DeadReason::kGaveUp;
  }
  // While its fuse holds the destination, only a delivery releases it: a
  // retry's answer keeps it held (and backs its probes off).
  const bool fuse_holding = fuse_.tripped(destination.name);
  const bool was_refused = reachability_.Of(destination.name, Steady()).refused;
  if (!fuse_holding && reachability_.OnAnswer(destination.name, Steady())) {
    Log(LogSeverity::kInfo, LogEvent::kDestinationReachable,
        absl::StrCat(
            "destination ", destination.name,
            was_refused ? " accepts this device again" : " reachable again",
            " (event ", event.id, " answered)"),
        event.id, destination.name);
  }
  // The last dead letters the fuse lets through: held from now on.
  if (fuse_holding || fuse_trips) TripFuse(*flight, result);
  return true;
}

bool AgentImpl::FuseHolds(const InFlight& flight, const SendResult& result,
                          const Decision& d, bool* trips) {
  if (flight.workflow != nullptr) return false;
  const Destination& destination = *flight.destination;
  if (d.kind == Decision::Kind::kDelivered) {
    fuse_.OnDelivered(destination.name);  // reachability logs the change
    return false;
  }
  if (d.kind != Decision::Kind::kDeadLetter) return false;
  // The answer that dead-letters, in a few words ("HTTP 400", "PUBACK
  // 0x99 ..."); a retry budget spent on timeouts has none but its code.
  const std::string answer =
      result.transport.ok()
          ? result.answer
          : absl::StrCat("no answer (",
                         absl::StatusCodeToString(result.transport.code()),
                         ")");
  // A refusal is the receiver's word on the whole batch; a budget spent is
  // the first event's, the others' decided on their own (SettleBatchRest).
  const size_t events = d.rejected ? 1 + flight.batch_rest.size() : 1;
  switch (fuse_.OnDeadLetters(destination.name, answer, events,
                              destination.dead_letter_fuse)) {
    case DeadLetterFuse::Verdict::kDeadLetter:
      return false;
    case DeadLetterFuse::Verdict::kDeadLetterTrips:
      *trips = true;
      return false;
    case DeadLetterFuse::Verdict::kHold:
      return true;
  }
  return false;
}

void AgentImpl::HoldForFuse(InFlight* flight, const Decision& d,
                            absl::Time now) {
  // Sent and refused, but not buried: a failed attempt of each event, due
  // again after the policy's backoff, so that the next probe is another
  // event and a few genuinely bad ones cannot hold the destination for
  // good. The store computes each one's retry age.
  auto retry = [&](PendingEvent e) {
    Decision r = d;
    r.kind = Decision::Kind::kRetry;
    r.retry_age = absl::InfiniteDuration();
    r.next_attempt =
        now + RetryDelay(flight->destination->retry,
                         static_cast<int>(e.attempts), std::nullopt, bitgen_);
    r.error = absl::StrCat(d.error, "; held by the dead-letter fuse");
    settled_.push_back(SettlementFor(r, std::move(e), now));
  };
  for (PendingEvent& e : flight->batch_rest) retry(std::move(e));
  flight->batch_rest.clear();
  retry(std::move(flight->event));
}

void AgentImpl::TripFuse(const InFlight& flight, const SendResult& result) {
  const Destination& destination = *flight.destination;
  if (!reachability_.OnRefused(destination.name, flight.probe, Steady())) {
    return;  // held already (its next probe is backed off): one record
  }
  Log(LogSeverity::kError, LogEvent::kDeadLetterFuse,
      absl::StrCat(
          "destination ", destination.name, ": its receiver answered ",
          result.transport.ok() ? result.answer : "nothing",
          " to event after event, and dead-lettering ",
          destination.dead_letter_fuse,
          " in a row is what dead_letter_fuse allows; holding its events and "
          "probing one at a time instead (a probe it refuses is a failed "
          "attempt, retried later). If the receiver refuses this device (a "
          "secret, a signature's timestamp), fix that: the held events then "
          "go, and outboxctl replay puts back the ones dead-lettered; if it "
          "means to reject these events, raise dead_letter_fuse or set it "
          "to 0"),
      flight.event.id, destination.name);
}

// A workflow completed by its last step's write, which a cancel recorded
// meanwhile kept pending: settled as a step done (its reverts are next), so
// that write is synced before the first of them leaves.
void AgentImpl::KeptForCancel(const SettleResult& result,
                              std::vector<Settlement>* batch) {
  if (result.kept_for_cancel.empty()) return;
  const absl::flat_hash_set<std::string> kept(result.kept_for_cancel.begin(),
                                              result.kept_for_cancel.end());
  for (Settlement& s : *batch) {
    if (kept.contains(s.event.id)) s.kind = Settlement::Kind::kStepDone;
  }
}

void AgentImpl::NoteWritten(
    const Settlement& s,
    const absl::flat_hash_map<uint64_t, AgentMetrics::DeadReason>& unsent,
    WorkflowWrites* w) {
  definitions_.Written(s);
  metrics_.Count(s, unsent, Steady());
  LogWorkflowSettlement(s);
  if (!s.workflow_state.empty()) NoteWorkflowSettled(s);
  switch (s.kind) {
    case Settlement::Kind::kDelivered:
      ++stats_.delivered;
      if (!s.workflow_state.empty()) w->completed = true;
      break;
    case Settlement::Kind::kAttempt:
      ++stats_.retries_scheduled;
      break;
    case Settlement::Kind::kStepDone:
      (SettlesMarkOnly(s) ? w->marked
       : SettlesRevert(s) ? w->revert_done
                          : w->step_done) = true;
      break;
    case Settlement::Kind::kDeadLetter:
    case Settlement::Kind::kDeadLetterUnsent:
      ++stats_.dead_lettered;
      if (s.kind == Settlement::Kind::kDeadLetterUnsent) {
        Log(LogSeverity::kError, LogEvent::kDeadLetter,
            absl::StrCat("event ", s.event.id, " dead-lettered: ", s.reason),
            s.event.id, s.event.destination);
      }
      break;
  }
}

absl::Status AgentImpl::FlushSettlements() {
  if (settled_.empty()) return absl::OkStatus();
  std::vector<Settlement> batch;
  batch.swap(settled_);
  absl::flat_hash_map<uint64_t, AgentMetrics::DeadReason> unsent;
  unsent.swap(dead_reasons_);
  absl::flat_hash_map<uint64_t, WorkflowMemo> memos;
  memos.swap(memos_);
  absl::StatusOr<SettleResult> result = store_->Settle(batch);
  // A full disk: the events stay as they were (a delivered one will be sent
  // again, with the same id).
  if (!result.ok()) return PauseIfDiskFull(result.status());
  absl::flat_hash_set<std::string> gone(result->not_pending.begin(),
                                        result->not_pending.end());
  KeptForCancel(*result, &batch);
  WorkflowWrites w;
  for (const Settlement& s : batch) {
    if (gone.contains(s.event.id)) {
      // Only this agent writes the queue while it runs, so the event was
      // removed behind its back; there is nothing left to update.
      Log(LogSeverity::kWarning, LogEvent::kEventNotPending,
          absl::StrCat("event ", s.event.id, ": no longer pending"),
          s.event.id);
      continue;
    }
    NoteWritten(s, unsent, &w);
  }
  if (!unsynced_) {
    unsynced_ = true;
    unsynced_since_ = Steady();
  }
  if (w.completed) internal::CrashPoint(internal::kWorkflowCompletedWritten);
  if (!w.step_done && !w.revert_done && !w.marked) return absl::OkStatus();
  // A workflow step (or revert) finished: its result must be durable before
  // the next one starts, or a power cut could lose a step the receiver
  // already acted on while a later one went out. A step's sent mark
  // likewise, before its first send: else a cut after the receiver's 2xx
  // would leave no trace of the step for compensation. (A completion needs
  // none: nothing follows it.)
  if (w.step_done) internal::CrashPoint(internal::kWorkflowStepBeforeSync);
  if (w.revert_done) internal::CrashPoint(internal::kWorkflowRevertBeforeSync);
  if (w.marked) internal::CrashPoint(internal::kWorkflowMarkBeforeSync);
  return AwaitDurable(&batch, gone, result->written, &memos);
}

absl::Status AgentImpl::AwaitDurable(
    std::vector<Settlement>* batch,
    const absl::flat_hash_set<std::string>& gone, uint64_t written,
    absl::flat_hash_map<uint64_t, WorkflowMemo>* memos) {
  // Broken on purpose: planned as if the write were durable already.
  const uint64_t mark = test_.skip_workflow_sync ? 0 : written;
  const absl::Time now = clock_->Now();
  for (Settlement& s : *batch) {
    if (s.kind != Settlement::Kind::kStepDone || gone.contains(s.event.id)) {
      continue;
    }
    awaiting_seqs_.insert(s.event.seq);
    std::optional<WorkflowMemo> memo;
    auto kept = memos->find(s.event.seq);
    if (kept != memos->end()) memo = std::move(kept->second);
    awaiting_durable_.push_back({mark,
                                 RequeuedAfterStepDone(std::move(s.event), now),
                                 std::move(memo)});
  }
  if (mark == 0) return absl::OkStatus();
  // Not waited for: the loop sends everything else meanwhile, and the
  // store's wakeup says when it is durable (StartDurable). One request
  // covers every workflow of the round, and a producer's synced commit may
  // cover it first.
  return PauseIfDiskFull(store_->RequestSync(mark));
}

absl::Status AgentImpl::SyncIfDue(bool now_please) {
  if (!unsynced_) return absl::OkStatus();
  if (!now_please &&
      Steady() < unsynced_since_ + config_.agent.ack_sync_interval) {
    return absl::OkStatus();
  }
  absl::Status s = store_->Sync();
  if (!s.ok()) return PauseIfDiskFull(s);
  unsynced_ = false;
  unsynced_since_ = absl::InfiniteFuture();
  return absl::OkStatus();
}

absl::Status AgentImpl::Housekeeping(absl::Time steady) {
  if (steady < next_housekeeping_) return absl::OkStatus();
  next_housekeeping_ = steady + config_.agent.idempotency_purge_interval;
  // Every deletion by age is measured by the store on its own clock
  // (Store::StoreClockNow), which a wall clock set ahead or back never
  // moves: the purges run the same whether the agent trusts the wall clock
  // or not, and never delete anything younger than its setting.
  absl::StatusOr<size_t> keys = store_->PurgeExpiredIdempotencyKeys();
  // Purging can wait for room.
  if (!keys.ok()) return PauseIfDiskFull(keys.status());
  if (config_.agent.dead_letter_retention > absl::ZeroDuration()) {
    absl::StatusOr<size_t> dead =
        store_->PurgeDeadLetters(config_.agent.dead_letter_retention);
    if (!dead.ok()) return PauseIfDiskFull(dead.status());
    if (*dead > 0) {
      Log(LogSeverity::kInfo, LogEvent::kDeadLettersPurged,
          absl::StrCat(
              "purged ", *dead, " dead letter(s) dead for more than ",
              absl::FormatDuration(config_.agent.dead_letter_retention),
              " of the store's time"));
    }
  }
  if (!config_.workflows.empty() &&
      config_.agent.workflow_retention > absl::ZeroDuration()) {
    absl::StatusOr<size_t> workflows =
        store_->PurgeFinishedWorkflows(config_.agent.workflow_retention);
    if (!workflows.ok()) return PauseIfDiskFull(workflows.status());
  }
  // A definition stays while a stored workflow names it; one that no
  // workflow names and the configuration no longer has goes.
  if (definitions_.HoldsUnconfigured()) {
    absl::StatusOr<std::vector<std::string>> unused =
        store_->PurgeWorkflowDefinitions(definitions_.ConfiguredIds());
    if (!unused.ok()) return PauseIfDiskFull(unused.status());
    definitions_.Forget(*unused);
  }
  return absl::OkStatus();
}

void AgentImpl::SettleBatchRest(InFlight* flight, const SendResult& result,
                                absl::Time now) {
  for (PendingEvent& e : flight->batch_rest) {
    const Decision d =
        Decide(result, e, flight->destination->retry, now, bitgen_);
    if (d.kind == Decision::Kind::kDeadLetter) {
      dead_reasons_[e.seq] = d.rejected ? AgentMetrics::DeadReason::kRejected
                                        : AgentMetrics::DeadReason::kGaveUp;
    }
    settled_.push_back(SettlementFor(d, std::move(e), now));
  }
  flight->batch_rest.clear();
}

}  // namespace outbox
