// Copyright (c) edge-outbox authors.

#include "agent/agent_impl.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/delivery.h"
#include "lib/crash_points.h"
#include "lib/status_macros.h"

namespace outbox {

absl::StatusOr<std::unique_ptr<Agent>> Agent::Create(Store* store,
                                                     AgentOptions options) {
  if (store == nullptr) {
    return absl::InvalidArgumentError("Agent::Create: store is null");
  }
  absl::StatusOr<AgentConfig> config =
      !options.config_path.empty()
          ? LoadAgentConfig(options.config_path)
          : ParseAgentConfig(options.config_text, "config_text");
  if (!config.ok()) return config.status();
  std::unique_ptr<AgentImpl> agent(
      new AgentImpl(store, std::move(options), *std::move(config)));
  OUTBOX_RETURN_IF_ERROR(agent->Init());
  return std::unique_ptr<Agent>(std::move(agent));
}

AgentImpl::AgentImpl(Store* store, AgentOptions options, AgentConfig config)
    : store_(store),
      options_(std::move(options)),
      config_(std::move(config)),
      clock_(options_.clock != nullptr ? options_.clock : SystemClock()),
      transport_(std::move(options_.transport)) {
  for (const Destination& d : config_.destinations) destinations_[d.name];
}

AgentImpl::~AgentImpl() {
  store_->SetWakeup(nullptr);
  if (transport_ != nullptr) {
    std::vector<HttpResult> abandoned;  // left pending; resent next time
    transport_->AbandonAll(&abandoned);
  }
}

absl::Status AgentImpl::Init() {
  if (transport_ == nullptr) {
    CurlTransportOptions curl;
    curl.max_in_flight = static_cast<size_t>(config_.agent.max_in_flight);
    OUTBOX_ASSIGN_OR_RETURN(transport_, NewCurlTransport(curl));
  }
  OUTBOX_ASSIGN_OR_RETURN(poller_, Poller::Create());
  OUTBOX_ASSIGN_OR_RETURN(wakeup_, Wakeup::Create());
  OUTBOX_ASSIGN_OR_RETURN(timer_, Timer::Create());
  std::vector<int> fds = {transport_->fd(), wakeup_->fd(), timer_->fd()};
  if (options_.watch_network) {
    absl::StatusOr<std::unique_ptr<NetlinkMonitor>> netlink =
        NetlinkMonitor::Open();
    if (netlink.ok()) {
      netlink_ = *std::move(netlink);
      fds.push_back(netlink_->fd());
    } else {
      Log(absl::StrCat("network changes not watched (",
                       netlink.status().message(),
                       "); unreachable destinations are probed on a timer"));
    }
  }
  for (int fd : fds) {
    OUTBOX_RETURN_IF_ERROR(poller_->Watch(fd, Poller::kReadable));
  }
  // Commits wake the agent. Wakeup::Signal is thread-safe and cheap, as
  // Store::SetWakeup requires; the destructor unsets it before wakeup_ goes.
  Wakeup* wakeup = wakeup_.get();
  store_->SetWakeup([wakeup] { wakeup->Signal(); });
  return absl::OkStatus();
}

void AgentImpl::Stop() {
  stop_requested_.store(true);
  wakeup_->Signal();  // async-signal-safe: Stop() may run in a handler
}

absl::Status AgentImpl::ResumeDestination(absl::string_view name) {
  auto it = destinations_.find(name);
  if (it == destinations_.end()) {
    return absl::NotFoundError(
        absl::StrCat("no destination named '", name, "'"));
  }
  it->second.paused = false;
  next_due_ = absl::InfinitePast();  // look again at once
  return absl::OkStatus();
}

AgentStats AgentImpl::stats() const {
  AgentStats s = stats_;
  s.offline = !destinations_.empty() &&
              std::all_of(destinations_.begin(), destinations_.end(),
                          [](const auto& d) { return !d.second.reachable; });
  return s;
}

void AgentImpl::Log(absl::string_view line) {
  if (options_.log) options_.log(line);
}

absl::Status AgentImpl::Run() {
  while (true) {
    OUTBOX_RETURN_IF_ERROR(Step());
    if (stopped_) return absl::OkStatus();
    OUTBOX_RETURN_IF_ERROR(Wait());
  }
}

absl::StatusOr<uint64_t> AgentImpl::Drain() {
  while (true) {
    OUTBOX_RETURN_IF_ERROR(Step());
    if (stopped_ || (idle_ && in_flight_.empty())) break;
    OUTBOX_RETURN_IF_ERROR(Wait());
  }
  OUTBOX_ASSIGN_OR_RETURN(Stats stats, store_->GetStats());
  return stats.pending_events;
}

absl::Status AgentImpl::RunOnce(absl::Time deadline) {
  const absl::Duration limit = deadline - clock_->Now();
  if (limit > absl::ZeroDuration()) OUTBOX_RETURN_IF_ERROR(Wait(limit));
  return Step();
}

absl::Status AgentImpl::Wait(absl::Duration limit) {
  // Which members are ready does not matter: each round looks at everything.
  std::vector<Poller::Ready> ready;
  return poller_->Wait(limit, &ready);
}

void AgentImpl::DrainWakeups() {
  wakeup_->Clear();
  timer_->Clear();
  if (netlink_ != nullptr && netlink_->Drain()) {
    // The network changed: an unreachable destination may be back. Probe
    // each at once rather than wait out its backoff.
    for (auto& [name, state] : destinations_) {
      if (!state.reachable) {
        state.probe_at = absl::InfinitePast();
        state.probe_backoff = absl::ZeroDuration();
      }
    }
    next_due_ = absl::InfinitePast();
  }
}

absl::Status AgentImpl::Step() {
  if (stopped_) return absl::OkStatus();
  DrainWakeups();
  std::vector<HttpResult> done;
  absl::Status transport = transport_->Process(&done);
  if (!transport.ok()) {
    // The transport keeps its requests and reports them later; say so once
    // per round and go on.
    Log(absl::StrCat("transport: ", transport.message()));
  }
  for (const HttpResult& result : done) {
    OUTBOX_RETURN_IF_ERROR(HandleResult(result));
  }

  const absl::Time now = clock_->Now();
  if (stop_requested_.load()) {
    if (stop_deadline_ == absl::InfiniteFuture()) {
      stop_deadline_ = now + options_.shutdown_grace;
    }
    if (in_flight_.empty() || now >= stop_deadline_) {
      // Abandoned requests stay pending in the store: they are sent again,
      // with the same id, the next time an agent runs. Nothing is marked
      // delivered without its 2xx.
      std::vector<HttpResult> abandoned;
      transport_->AbandonAll(&abandoned);
      if (!abandoned.empty()) {
        Log(absl::StrCat("stopping: abandoned ", abandoned.size(),
                         " request(s) in flight; they stay pending"));
      }
      in_flight_.clear();
      in_flight_seqs_.clear();
      stopped_ = true;
      return absl::OkStatus();
    }
    ArmTimer(stop_deadline_);
    return absl::OkStatus();
  }

  OUTBOX_RETURN_IF_ERROR(StartDueEvents());
  OUTBOX_RETURN_IF_ERROR(Housekeeping(now));

  absl::Time wake = std::min(next_due_, next_housekeeping_);
  if (now < store_full_until_) wake = std::min(wake, store_full_until_);
  for (const auto& [name, state] : destinations_) {
    if (!state.reachable && !state.probe_in_flight) {
      wake = std::min(wake, state.probe_at);
    }
  }
  ArmTimer(wake);
  return absl::OkStatus();
}

absl::Status AgentImpl::StartDueEvents() {
  const absl::Time now = clock_->Now();
  const size_t max = static_cast<size_t>(config_.agent.max_in_flight);
  if (in_flight_.size() >= max || now < store_full_until_) {
    return absl::OkStatus();
  }

  absl::flat_hash_set<std::string> probing;  // one probe per destination
  auto eligible = [&](const PendingEvent& e) {
    if (in_flight_seqs_.contains(e.seq)) return false;
    absl::StatusOr<const Destination*> d =
        Route(config_, e.type, e.destination);
    if (!d.ok()) return true;  // taken, to be dead-lettered with the reason
    const DestinationState& state = destinations_[(*d)->name];
    if (state.paused) return false;
    if (state.reachable) return true;
    if (state.probe_in_flight || state.probe_at > now) return false;
    return probing.insert((*d)->name).second;
  };
  absl::StatusOr<DueEvents> next =
      store_->NextDue(max - in_flight_.size(), eligible);
  if (!next.ok()) return PauseIfDiskFull(next.status());
  DueEvents& due = *next;
  next_due_ = due.next_due;

  for (const UnreadableEntry& bad : due.unreadable) {
    // Damaged entries are moved aside (raw bytes kept) so they block nothing
    // and an operator can see them among the dead letters.
    absl::Status s = store_->Quarantine(bad.seq);
    if (s.ok()) ++stats_.quarantined;
    Log(absl::StrCat("pending entry ", bad.seq, " is unreadable (",
                     bad.why.message(),
                     "); quarantined: ", s.ok() ? "ok" : s.ToString()));
  }
  for (PendingEvent& event : due.events) {
    absl::StatusOr<const Destination*> destination =
        Route(config_, event.type, event.destination);
    if (!destination.ok()) {
      OUTBOX_RETURN_IF_ERROR(
          DeadLetterUnsendable(event, destination.status().message()));
      continue;
    }
    const uint64_t tag = next_tag_++;
    HttpRequest request = BuildRequest(event, **destination, now, tag);
    internal::CrashPoint(internal::kAgentBeforeSend);
    absl::Status started = transport_->Start(std::move(request));
    if (absl::IsResourceExhausted(started)) break;  // full; next round
    if (!started.ok()) {
      // The transport refused this request itself (e.g. a Content-Type with
      // a line break): sending it again cannot help.
      OUTBOX_RETURN_IF_ERROR(DeadLetterUnsendable(
          event, absl::StrCat("cannot be sent: ", started.message())));
      continue;
    }
    ++stats_.requests;
    DestinationState& state = destinations_[(*destination)->name];
    const bool probe = !state.reachable;
    if (probe) state.probe_in_flight = true;
    in_flight_seqs_.insert(event.seq);
    in_flight_.emplace(tag, InFlight{std::move(event), *destination, probe});
  }
  // Idle: nothing in flight and nothing due for a reachable destination
  // (NextDue puts next_due at `now` when it stopped at the limit).
  idle_ = in_flight_.empty() && next_due_ > now;
  return absl::OkStatus();
}

absl::Status AgentImpl::DeadLetterUnsendable(const PendingEvent& event,
                                             absl::string_view reason) {
  absl::Status s = store_->MoveToDeadLetters(event, reason);
  // A full disk: it stays pending and is looked at again.
  if (!s.ok()) return PauseIfDiskFull(s);
  ++stats_.dead_lettered;
  Log(absl::StrCat("event ", event.id, " dead-lettered: ", reason));
  return absl::OkStatus();
}

absl::Status AgentImpl::HandleResult(const HttpResult& result) {
  auto it = in_flight_.find(result.tag);
  if (it == in_flight_.end()) return absl::OkStatus();  // abandoned earlier
  InFlight flight = std::move(it->second);
  in_flight_.erase(it);
  in_flight_seqs_.erase(flight.event.seq);
  if (flight.probe)
    destinations_[flight.destination->name].probe_in_flight = false;
  return ApplyDecision(flight, result);
}

absl::Status AgentImpl::ApplyDecision(const InFlight& flight,
                                      const HttpResult& result) {
  const absl::Time now = clock_->Now();
  const PendingEvent& event = flight.event;
  const Destination& destination = *flight.destination;
  const Decision d = Decide(result, event, destination.retry, now, bitgen_);
  // The receiver may have acted on it (or answered 2xx) and the store does
  // not know yet: a crash here means a resend with the same id.
  internal::CrashPoint(internal::kAgentAfterAnswer);
  if (d.kind == Decision::Kind::kOffline) {
    ++stats_.offline_results;
    MarkUnreachable(flight, d.error);
    return absl::OkStatus();  // not an attempt: the event is untouched
  }
  MarkReachable(destination);
  absl::Status s;
  switch (d.kind) {
    case Decision::Kind::kDelivered:
      s = store_->MarkDelivered(event);
      if (s.ok()) ++stats_.delivered;
      break;
    case Decision::Kind::kRetry:
      s = store_->RecordAttempt(
          event, AttemptRecord{d.error, d.http_status, d.next_attempt});
      if (s.ok()) ++stats_.retries_scheduled;
      Log(absl::StrCat("event ", event.id, " to ", destination.name,
                       ": attempt ", event.attempts + 1, " failed (", d.error,
                       "); retry in ",
                       absl::FormatDuration(absl::Trunc(
                           d.next_attempt - now, absl::Milliseconds(1)))));
      break;
    case Decision::Kind::kDeadLetter:
      // Record the final attempt first, so the dead letter keeps its HTTP
      // status and attempt count. (A crash between the two writes only means
      // the event is sent once more and dead-lettered again.)
      s = store_->RecordAttempt(event,
                                AttemptRecord{d.error, d.http_status, now});
      if (s.ok()) s = store_->MoveToDeadLetters(event, d.error);
      if (s.ok()) ++stats_.dead_lettered;
      Log(absl::StrCat("event ", event.id, " to ", destination.name,
                       " dead-lettered: ", d.error));
      break;
    case Decision::Kind::kPauseDestination:
      s = store_->RecordAttempt(event,
                                AttemptRecord{d.error, d.http_status, now});
      destinations_[destination.name].paused = true;
      Log(absl::StrCat("destination ", destination.name, " paused: ", d.error));
      break;
    case Decision::Kind::kOffline:
      break;
  }
  if (absl::IsNotFound(s)) {
    // Only this agent writes the queue while it runs, so this means the
    // event was removed behind its back; there is nothing left to update.
    Log(absl::StrCat("event ", event.id, ": ", s.message()));
    return absl::OkStatus();
  }
  // A full disk: the event stays as it was (a delivered one will be sent
  // again, with the same id).
  return PauseIfDiskFull(s);
}

absl::Status AgentImpl::PauseIfDiskFull(const absl::Status& s) {
  if (!absl::IsResourceExhausted(s)) return s;
  // Pause sending until there may be room, rather than fail the loop: the
  // work that failed was not done, and is done again after the pause.
  if (clock_->Now() >= store_full_until_) {
    Log(absl::StrCat("store cannot write (", s.message(),
                     "); pausing deliveries for ",
                     absl::FormatDuration(kFullDiskPause)));
  }
  store_full_until_ = clock_->Now() + kFullDiskPause;
  return absl::OkStatus();
}

void AgentImpl::MarkReachable(const Destination& d) {
  DestinationState& state = destinations_[d.name];
  if (!state.reachable)
    Log(absl::StrCat("destination ", d.name, " reachable again"));
  state.reachable = true;
  state.probe_backoff = absl::ZeroDuration();
}

void AgentImpl::MarkUnreachable(const InFlight& flight, absl::string_view why) {
  DestinationState& state = destinations_[flight.destination->name];
  const absl::Time now = clock_->Now();
  if (state.reachable) {
    state.reachable = false;
    state.probe_backoff = config_.agent.probe_interval_min;
    Log(absl::StrCat("destination ", flight.destination->name, " unreachable (",
                     why, "); holding its events, probing"));
  } else if (flight.probe) {
    // A failed probe doubles the wait, up to the configured maximum: an
    // offline device should cost next to nothing.
    state.probe_backoff =
        std::min(state.probe_backoff * 2, config_.agent.probe_interval_max);
  } else {
    return;  // a request started before the first failure came back
  }
  state.probe_at = now + state.probe_backoff;
}

absl::Status AgentImpl::Housekeeping(absl::Time now) {
  if (now < next_housekeeping_) return absl::OkStatus();
  next_housekeeping_ = now + config_.agent.idempotency_purge_interval;
  absl::StatusOr<size_t> keys = store_->PurgeExpiredIdempotencyKeys();
  // Purging can wait for room.
  if (!keys.ok()) return PauseIfDiskFull(keys.status());
  if (config_.agent.dead_letter_retention > absl::ZeroDuration()) {
    absl::StatusOr<size_t> dead =
        store_->PurgeDeadLetters(now - config_.agent.dead_letter_retention);
    if (!dead.ok()) return PauseIfDiskFull(dead.status());
    if (*dead > 0) {
      Log(absl::StrCat(
          "purged ", *dead, " dead letter(s) older than ",
          absl::FormatDuration(config_.agent.dead_letter_retention)));
    }
  }
  return absl::OkStatus();
}

void AgentImpl::ArmTimer(absl::Time when) {
  absl::Status armed;
  if (when == absl::InfiniteFuture()) {
    armed = timer_->Disarm();
  } else {
    // The timer runs on CLOCK_MONOTONIC; convert the wall-clock deadline to
    // a delay from now (at least 1 ms, so a deadline just past does not spin
    // the loop).
    absl::Duration delay =
        std::max(when - clock_->Now(), absl::Milliseconds(1));
    delay = std::min(delay, absl::Hours(24));  // re-evaluate at least daily
    armed = timer_->Arm(delay);
  }
  // Cannot fail on a valid timer; if it did, the loop would sleep until the
  // next commit or network event instead, so say so.
  if (!armed.ok()) Log(absl::StrCat("timer: ", armed.message()));
}

}  // namespace outbox
