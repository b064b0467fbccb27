// Copyright (c) edge-outbox authors.

#include "agent/agent_impl.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/decision.h"
#include "agent/send/batch_request.h"
#include "agent/send/kafka_sender.h"
#include "agent/send/mqtt_sender.h"
#include "base/status_macros.h"
#include "lib/crash_points.h"

namespace outbox {
namespace {

// retry_scheduled and dead_letter records, per destination: at most this
// many per window are written one by one (LogLimiter).
constexpr int kLogBurst = 10;
constexpr absl::Duration kLogWindow = absl::Minutes(1);

// Whether what is sent to `d` carries the wall clock's time, which its
// receiver may check: HTTP's webhook-timestamp, a Kafka record's timestamp.
bool StampsTime(const Destination& d) {
  return d.kind != Destination::Kind::kMqtt;
}

std::vector<std::string> DestinationNames(const AgentConfig& config) {
  std::vector<std::string> names;
  for (const Destination& d : config.destinations) names.push_back(d.name);
  return names;
}

// Makes the sender of one destination of a kind that has one sender per
// destination (a broker connection or a producer each).
using SenderFactory =
    absl::StatusOr<std::unique_ptr<Sender>> (*)(const Destination&);

// Null for HTTP: every HTTP destination shares one sender (one curl multi).
SenderFactory FactoryFor(Destination::Kind kind) {
  switch (kind) {
    case Destination::Kind::kHttp:
      return nullptr;
    case Destination::Kind::kMqtt:
      return NewMqttSender;
    case Destination::Kind::kKafka:
      return NewKafkaSender;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AgentImpl>> AgentImpl::Create(
    Store* store, AgentOptions options, AgentConfig config,
    const AgentTestOptions& test) {
  std::unique_ptr<AgentImpl> agent(
      new AgentImpl(store, std::move(options), std::move(config), test));
  OUTBOX_RETURN_IF_ERROR(agent->Init());
  return agent;
}

std::unique_ptr<HttpTransport> AgentImpl::TakeTransport() {
  return http_->TakeTransport();
}

AgentImpl::AgentImpl(Store* store, AgentOptions options, AgentConfig config,
                     const AgentTestOptions& test)
    : store_(store),
      options_(std::move(options)),
      config_(std::move(config)),
      test_(test),
      clock_(options_.clock != nullptr ? options_.clock : SystemClock()),
      batcher_(store_, config_),
      reachability_(DestinationNames(config_), config_.agent.probe_interval_min,
                    config_.agent.probe_interval_max),
      definitions_(&config_),
      clock_trust_(config_.agent.clock_tolerance,
                   config_.agent.require_synchronized_clock),
      log_limiter_(kLogBurst, kLogWindow),
      metrics_(store_, &config_, clock_,
               [this](LogSeverity severity, LogEvent event, std::string m) {
                 Log(severity, event, std::move(m));
               }) {}

AgentImpl::~AgentImpl() {
  store_->SetWakeup(nullptr);
  // The senders abandon what is in flight: it stays pending, and is sent
  // again next time with the same id.
}

absl::Status AgentImpl::Init() {
  std::unique_ptr<HttpTransport> transport = std::move(options_.transport);
  if (transport == nullptr) {
    CurlTransportOptions curl;
    curl.max_in_flight = static_cast<size_t>(config_.agent.max_in_flight);
    OUTBOX_ASSIGN_OR_RETURN(transport, NewCurlTransport(curl));
  }
  http_ = std::make_unique<HttpSender>(std::move(transport));
  senders_.push_back(http_.get());
  for (const Destination& d : config_.destinations) {
    if (d.rate_limit.enabled()) {
      rate_limiters_.emplace(d.name, RateLimiter(d.rate_limit, Steady()));
    }
    const SenderFactory factory = FactoryFor(d.kind);
    if (factory == nullptr) continue;  // HTTP: the shared sender above
    OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Sender> sender, factory(d));
    senders_.push_back(sender.get());
    brokers_[d.name] = std::move(sender);
  }
  OUTBOX_RETURN_IF_ERROR(definitions_.Init(store_));
  OUTBOX_ASSIGN_OR_RETURN(poller_, Poller::Create());
  OUTBOX_ASSIGN_OR_RETURN(wakeup_, Wakeup::Create());
  OUTBOX_ASSIGN_OR_RETURN(timer_, Timer::Create());
  std::vector<int> fds = {wakeup_->fd(), timer_->fd()};
  for (const Sender* sender : senders_) fds.push_back(sender->fd());
  if (options_.watch_network) {
    absl::StatusOr<std::unique_ptr<NetlinkMonitor>> netlink =
        NetlinkMonitor::Open();
    if (netlink.ok()) {
      netlink_ = *std::move(netlink);
      fds.push_back(netlink_->fd());
    } else {
      Log(LogSeverity::kWarning, LogEvent::kNetworkNotWatched,
          absl::StrCat("network changes not watched (",
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
  LogStoreOpened();
  return absl::OkStatus();
}

void AgentImpl::LogStoreOpened() {
  absl::StatusOr<Stats> stats = store_->GetStats();
  if (!stats.ok()) {
    Log(LogSeverity::kWarning, LogEvent::kStoreOpened,
        absl::StrCat("store opened; its counters cannot be read (",
                     stats.status().message(), ")"));
    return;
  }
  Log(LogSeverity::kInfo, LogEvent::kStoreOpened,
      absl::StrCat("store opened: ", stats->pending_events,
                   " event(s) pending (", stats->pending_bytes,
                   " bytes, oldest ",
                   absl::FormatDuration(absl::Trunc(stats->oldest_pending_age,
                                                    absl::Seconds(1))),
                   "), ", stats->dead_letters, " dead letter(s)"));
}

void AgentImpl::Stop() {
  stop_requested_.store(true);
  wakeup_->Signal();  // async-signal-safe: Stop() may run in a handler
}

void AgentImpl::Interrupt() {
  interrupt_requested_.store(true);
  wakeup_->Signal();  // async-signal-safe, as in Stop()
}

absl::Status AgentImpl::ResumeDestination(absl::string_view name) {
  OUTBOX_RETURN_IF_ERROR(reachability_.Resume(name));
  Log(LogSeverity::kInfo, LogEvent::kDestinationResumed,
      absl::StrCat("destination ", name, " resumed"), "", name);
  next_due_ = absl::InfinitePast();  // look again at once
  return absl::OkStatus();
}

AgentStats AgentImpl::stats() const {
  AgentStats s = stats_;
  s.offline = reachability_.AllUnreachable();
  s.in_flight = in_flight_.size();
  return s;
}

void AgentImpl::Log(LogSeverity severity, LogEvent event, std::string message,
                    absl::string_view event_id, absl::string_view destination) {
  if (!options_.log) return;
  if (event == LogEvent::kRetryScheduled || event == LogEvent::kDeadLetter) {
    LogLimiter::Held held;
    const bool write = log_limiter_.Admit(event, destination, Steady(), &held);
    if (held.count > 0) LogHeld(held);
    if (!write) return;
  }
  WriteLog(severity, event, std::move(message), event_id, destination);
}

void AgentImpl::LogHeld(const LogLimiter::Held& held) {
  WriteLog(LogSeverity::kWarning, LogEvent::kLogSuppressed,
           absl::StrCat(held.count, " more ", LogEventName(held.event),
                        " record(s) for destination '", held.destination,
                        "' over ", absl::FormatDuration(held.over),
                        " not written one by one (at most ", kLogBurst,
                        " per minute are)"),
           "", held.destination);
}

void AgentImpl::ReportHeldLogs() {
  if (!options_.log) return;
  for (const LogLimiter::Held& held : log_limiter_.TakeHeld()) LogHeld(held);
}

void AgentImpl::WriteLog(LogSeverity severity, LogEvent event,
                         std::string message, absl::string_view event_id,
                         absl::string_view destination) {
  LogRecord record;
  record.time = clock_->Now();
  record.severity = severity;
  record.event = event;
  record.event_id = std::string(event_id);
  record.destination = std::string(destination);
  record.message = std::move(message);
  options_.log(record);
}

absl::Status AgentImpl::Run() { return Loop(/*until_interrupted=*/true); }

absl::Status AgentImpl::RunUntilStopped() {
  return Loop(/*until_interrupted=*/false);
}

absl::Status AgentImpl::Loop(bool until_interrupted) {
  while (true) {
    OUTBOX_RETURN_IF_ERROR(Step());
    if (stopped_) return absl::OkStatus();
    // After a round, so what it wrote is flushed; in flight goes on.
    if (until_interrupted && interrupt_requested_.exchange(false)) {
      return absl::OkStatus();
    }
    OUTBOX_RETURN_IF_ERROR(Wait());
  }
}

absl::StatusOr<uint64_t> AgentImpl::Drain() {
  while (true) {
    OUTBOX_RETURN_IF_ERROR(Step());
    // A rate limit delays due events, it does not make them not due: the
    // drain waits for the refill (one timer) rather than end with them.
    if (stopped_ ||
        (idle_ && in_flight_.empty() && rate_wake_ == absl::InfiniteFuture())) {
      break;
    }
    OUTBOX_RETURN_IF_ERROR(Wait());
  }
  ReportHeldLogs();
  // Everything this drain settled is on disk when it returns.
  OUTBOX_RETURN_IF_ERROR(SyncIfDue(/*now_please=*/true));
  WriteMetrics();
  OUTBOX_ASSIGN_OR_RETURN(Stats stats, store_->GetStats());
  return stats.pending_events;
}

absl::Status AgentImpl::RunOnce(absl::Time deadline) {
  const absl::Duration limit = deadline - clock_->Now();
  if (limit > absl::ZeroDuration()) OUTBOX_RETURN_IF_ERROR(Wait(limit));
  return Step();
}

absl::Status AgentImpl::Wait(absl::Duration limit) {
  OUTBOX_RETURN_IF_ERROR(poller_->Wait(limit, &ready_));
  ready_known_ = true;
  return absl::OkStatus();
}

bool AgentImpl::IsReady(int fd) const {
  return std::any_of(ready_.begin(), ready_.end(),
                     [fd](const Poller::Ready& r) { return r.fd == fd; });
}

void AgentImpl::DrainWakeups() {
  // Only what the poller said is ready: each read of an idle descriptor is
  // a system call for nothing, several per round on a busy drain.
  if (!ready_known_) poller_->Wait(absl::ZeroDuration(), &ready_).IgnoreError();
  ready_known_ = false;
  if (IsReady(wakeup_->fd())) wakeup_->Clear();
  if (IsReady(timer_->fd()) && timer_->Clear()) {
    armed_for_ = absl::InfinitePast();  // fired: armed for nothing now
  }
  if (netlink_ != nullptr && IsReady(netlink_->fd()) && netlink_->Drain()) {
    // The network changed: an unreachable destination may be back. Probe
    // each at once rather than wait out its backoff.
    reachability_.OnNetworkChange();
    next_due_ = absl::InfinitePast();
  }
}

absl::Status AgentImpl::Step() {
  if (stopped_) return absl::OkStatus();
  DrainWakeups();
  ProcessSenders();
  // Everything this round learned, in one write, before NextDue looks again.
  OUTBOX_RETURN_IF_ERROR(FlushSettlements());

  bool stopping = false;
  OUTBOX_RETURN_IF_ERROR(StopIfAsked(&stopping));
  if (stopping) return absl::OkStatus();

  const absl::Time steady = Steady();
  OUTBOX_RETURN_IF_ERROR(StartDueEvents());
  OUTBOX_RETURN_IF_ERROR(Housekeeping(steady));
  OUTBOX_RETURN_IF_ERROR(CheckClasses(steady));
  // Idle: what this round settled is made durable now. Not when only a
  // rate limit holds the backlog back: its refills end a round many times a
  // second, and a flush each time would cost one per event; the acks then
  // wait at most ack_sync_interval, as on a busy drain.
  const bool rate_held = rate_wake_ != absl::InfiniteFuture();
  OUTBOX_RETURN_IF_ERROR(SyncIfDue(/*now_please=*/idle_ && !rate_held));
  WriteMetricsIfDue(steady);

  absl::Time wake = std::min({next_due_, next_housekeeping_,
                              metrics_.next_write(), next_class_check_});
  if (steady < store_full_until_) wake = std::min(wake, store_full_until_);
  if (unsynced_) {
    wake = std::min(wake, unsynced_since_ + config_.agent.ack_sync_interval);
  }
  wake = std::min(wake, reachability_.NextProbe());
  wake = std::min(wake, rate_wake_);
  if (!clock_trust_.trusted()) wake = std::min(wake, steady + kClockRecheck);
  ArmTimer(wake);
  return absl::OkStatus();
}

void AgentImpl::ProcessSenders() {
  std::vector<SendResult> done;
  const absl::Time now = clock_->Now();
  for (Sender* sender : senders_) {
    // A sender's descriptor turns readable for every socket event and every
    // one of its timers, so when it is not, Process has nothing to do.
    if (!IsReady(sender->fd())) continue;
    absl::Status s = sender->Process(now, &done);
    if (!s.ok()) {
      // The sender keeps its deliveries and reports them later; say so
      // once per round and go on.
      Log(LogSeverity::kWarning, LogEvent::kInternalError,
          absl::StrCat("transport: ", s.message()));
    }
  }
  for (const SendResult& result : done) HandleResult(result);
}

Sender* AgentImpl::SenderFor(const Destination& destination) const {
  if (destination.kind == Destination::Kind::kHttp) return http_.get();
  auto it = brokers_.find(destination.name);
  return it != brokers_.end() ? it->second.get() : nullptr;
}

absl::Status AgentImpl::StopIfAsked(bool* stopping) {
  *stopping = stop_requested_.load();
  if (!*stopping) return absl::OkStatus();
  const absl::Time steady = Steady();
  if (stop_deadline_ == absl::InfiniteFuture()) {
    stop_deadline_ = steady + options_.shutdown_grace;
  }
  if (!in_flight_.empty() && steady < stop_deadline_) {
    ArmTimer(stop_deadline_);
    return absl::OkStatus();
  }
  // Abandoned requests stay pending in the store: they are sent again, with
  // the same id, the next time an agent runs. Nothing is marked delivered
  // without its 2xx.
  std::vector<SendResult> abandoned;
  for (Sender* sender : senders_) sender->AbandonAll(&abandoned);
  ReportHeldLogs();
  Log(LogSeverity::kInfo, LogEvent::kAgentStopped,
      abandoned.empty()
          ? std::string("stopped")
          : absl::StrCat("stopped: abandoned ", abandoned.size(),
                         " request(s) in flight; they stay pending"));
  in_flight_.clear();
  in_flight_seqs_.clear();
  stopped_ = true;
  absl::Status synced = SyncIfDue(/*now_please=*/true);
  WriteMetrics();  // the final figures, for a scraper that comes later
  return synced;
}

LaneGate AgentImpl::GateFor(const Lane& lane, absl::Time steady) {
  // (No key is built in the common case, nothing unrouted: this runs for
  // every lane in every round.)
  const bool unrouted = !unrouted_.empty() && unrouted_.contains(UnroutedKey(
                                                  lane.type, lane.destination));
  if (definitions_.MayBeWorkflow(lane.type, lane.destination)) {
    if (held_workflow_types_.contains(lane.type) || unrouted) {
      return LaneGate::kClosed;
    }
    // Its steps and reverts are webhooks: time-stamped.
    if (!clock_trust_.trusted()) return LaneGate::kClosed;
    // Enough workflows wait for a sync: none starts (marks its first step)
    // until they go on, which bounds what a sync keeps waiting.
    if (awaiting_durable_.size() >=
        kMaxAwaitingPerSlot *
            static_cast<size_t>(config_.agent.max_in_flight)) {
      return LaneGate::kClosed;
    }
    return WorkflowGate(lane, steady);
  }
  absl::StatusOr<const Destination*> d =
      Route(config_, lane.type, lane.destination);
  // No route: one event is taken, to name the lane in the record that says
  // it is held (HoldUnrouted); then it stays closed.
  if (!d.ok()) return unrouted ? LaneGate::kClosed : LaneGate::kOne;
  if (!clock_trust_.trusted() && StampsTime(**d)) return LaneGate::kClosed;
  // Closed until its bucket refills: one timer (rate_wake_), no CPU meanwhile.
  if (!RateAllows(**d, steady)) return LaneGate::kClosed;
  return reachability_.Gate((*d)->name, steady, &probing_);
}

std::string AgentImpl::UnroutedKey(absl::string_view type,
                                   absl::string_view destination) {
  return absl::StrCat(type, absl::string_view("\0", 1), destination);
}

void AgentImpl::HoldUnrouted(const PendingEvent& event,
                             const absl::Status& why) {
  if (!unrouted_.insert(UnroutedKey(event.type, event.destination)).second) {
    return;
  }
  metrics_.counts().SetUnroutedTypes(unrouted_.size());
  // A configuration that lost a route must not empty the queue into the
  // dead letters (Fluent Bit's #12225 is the same trap on a reload).
  Log(LogSeverity::kError, LogEvent::kNoRoute,
      absl::StrCat("event ", event.id, ": ", why.message(),
                   "; held with every event of its type (and those after "
                   "them in their ordering keys), none dead-lettered, until "
                   "a reload or restart brings a route"),
      event.id);
}

void AgentImpl::CheckClock() {
  const std::optional<bool> synchronized =
      config_.agent.require_synchronized_clock ? clock_->Synchronized()
                                               : std::nullopt;
  if (!clock_trust_.Update(clock_->Now(), store_->WallClockMark(),
                           synchronized)) {
    return;
  }
  metrics_.counts().SetClockTrusted(clock_trust_.trusted());
  if (clock_trust_.trusted()) {
    Log(LogSeverity::kInfo, LogEvent::kClockTrusted,
        absl::StrCat(clock_trust_.why(), "; delivering again"));
    next_due_ = absl::InfinitePast();
    return;
  }
  Log(LogSeverity::kError, LogEvent::kClockUntrusted,
      absl::StrCat(clock_trust_.why(),
                   ": holding the events of destinations that time-stamp "
                   "them (HTTP, Kafka) until the clock passes it; nothing "
                   "is dead-lettered. If the store's time is the wrong one "
                   "(a clock once set ahead), run outboxctl "
                   "reset-clock-mark"));
}

absl::Status AgentImpl::StartDueEvents() {
  CheckClock();
  const absl::Time steady = Steady();
  // A refill time from an earlier round must not arm the timer in the past.
  rate_wake_ = absl::InfiniteFuture();
  if (Full() || steady < store_full_until_) {
    return absl::OkStatus();
  }
  probing_.clear();
  workflow_probes_.clear();
  const absl::Time now = clock_->Now();
  OUTBOX_RETURN_IF_ERROR(StartDurable(now));
  absl::StatusOr<DueEvents> next = ReadDue(steady);
  if (!next.ok()) return PauseIfDiskFull(next.status());
  DueEvents& due = *next;
  next_due_ = due.wait == absl::InfiniteDuration() ? absl::InfiniteFuture()
                                                   : steady + due.wait;
  QuarantineUnreadable(due.unreadable);
  absl::Status started = StartEvents(&due.events, now);
  if (!started.ok()) {
    // The events queued for batches stay pending: a later round reads them
    // again, and must not find them queued already (one line each).
    batcher_.Forget();
    return PauseIfDiskFull(started);
  }
  absl::StatusOr<absl::Time> held = batcher_.SendAll(this, now, steady);
  if (held.ok()) {
    next_due_ = std::min(next_due_, *held);  // a batch waits for more
  } else {
    OUTBOX_RETURN_IF_ERROR(PauseIfDiskFull(held.status()));
  }
  return EndRound(steady);
}

absl::StatusOr<DueEvents> AgentImpl::ReadDue(absl::Time steady) {
  const size_t max = static_cast<size_t>(config_.agent.max_in_flight);
  // Those StartDurable settled without a request (a workflow that ended)
  // are still due in the store until this round's write.
  absl::flat_hash_set<uint64_t> settling;
  for (const Settlement& s : settled_) settling.insert(s.event.seq);
  // A batch takes up to max_events due events in one request slot, so ask
  // for that many more than the free slots (what is not sent this round is
  // read again in a later one).
  return store_->NextDue(
      max - in_flight_.size() + batcher_.extra(),
      [&](const Lane& lane) { return GateFor(lane, steady); },
      [&](uint64_t seq) {
        return in_flight_seqs_.contains(seq) || awaiting_seqs_.contains(seq) ||
               settling.contains(seq);
      });
}

void AgentImpl::QuarantineUnreadable(
    const std::vector<UnreadableEntry>& unreadable) {
  for (const UnreadableEntry& bad : unreadable) {
    // Damaged entries are moved aside (raw bytes kept) so they block nothing
    // and an operator can see them among the dead letters.
    absl::Status s = store_->Quarantine(bad.seq);
    if (s.ok()) {
      ++stats_.quarantined;
      metrics_.counts().OnDeadLettered(AgentMetrics::DeadReason::kUndecodable);
    }
    Log(LogSeverity::kError, LogEvent::kQuarantined,
        absl::StrCat("pending entry ", bad.seq, " is unreadable (",
                     bad.why.message(),
                     "); quarantined: ", s.ok() ? "ok" : s.ToString()));
  }
}

absl::Status AgentImpl::StartEvents(std::vector<PendingEvent>* events,
                                    absl::Time now) {
  std::optional<absl::flat_hash_set<std::string>> keys_in_flight;
  for (PendingEvent& event : *events) {
    if (Full()) break;  // (batcher_.extra() asked for more)
    if (held_workflow_types_.contains(event.type)) continue;  // this round
    if (KeyInFlight(event, &keys_in_flight)) continue;  // after its answer
    if (definitions_.MustRead(event.type, event.destination)) {
      OUTBOX_ASSIGN_OR_RETURN(const WorkflowStart started,
                              TryWorkflowEvent(&event, now));
      if (started == WorkflowStart::kFull) break;
      if (started != WorkflowStart::kPlain) continue;
    }
    absl::StatusOr<const Destination*> destination =
        Route(config_, event.type, event.destination);
    if (!destination.ok()) {
      HoldUnrouted(event, destination.status());
      continue;
    }
    if ((*destination)->batch.enabled) {
      batcher_.Queue(std::move(event), **destination);
      continue;
    }
    if (!Send(std::move(event), **destination, now)) break;  // full
  }
  return absl::OkStatus();
}

absl::Status AgentImpl::EndRound(absl::Time steady) {
  // The unsendable ones, workflows that ended without a request, and the
  // sent marks of steps about to start (once durable: StartDurable). What
  // left the queue lets the next event of its ordering key be due now,
  // which NextDue above could not see: look again at once, or an idle
  // agent would sleep past it.
  const bool left_queue =
      std::any_of(settled_.begin(), settled_.end(), [](const Settlement& s) {
        return s.kind == Settlement::Kind::kDelivered ||
               s.kind == Settlement::Kind::kDeadLetter ||
               s.kind == Settlement::Kind::kDeadLetterUnsent;
      });
  OUTBOX_RETURN_IF_ERROR(FlushSettlements());
  if (left_queue) next_due_ = steady;
  // Idle: nothing in flight, nothing due for a reachable destination
  // (NextDue waits 0 when it stopped at the limit) and no workflow waiting
  // for its last write to be durable.
  idle_ = in_flight_.empty() && next_due_ > steady && awaiting_durable_.empty();
  return absl::OkStatus();
}

bool AgentImpl::KeyInFlight(
    const PendingEvent& event,
    std::optional<absl::flat_hash_set<std::string>>* keys) const {
  if (event.ordering_key.empty()) return false;
  if (!keys->has_value()) {
    keys->emplace();
    for (const auto& [tag, flight] : in_flight_) {
      (*keys)->insert(flight.event.ordering_key);
      for (const PendingEvent& e : flight.batch_rest) {
        (*keys)->insert(e.ordering_key);
      }
    }
  }
  return (*keys)->contains(event.ordering_key);
}

bool AgentImpl::Full() const {
  return in_flight_.size() >= static_cast<size_t>(config_.agent.max_in_flight);
}

absl::StatusOr<bool> AgentImpl::MayRide(const PendingEvent& follower,
                                        const Destination& destination,
                                        absl::Time now) {
  // Not when it goes elsewhere, is a workflow's, or may not be sent yet
  // (deliver_after).
  absl::StatusOr<const Destination*> to =
      Route(config_, follower.type, follower.destination);
  if (!to.ok() || *to != &destination || follower.next_attempt > now ||
      definitions_.MayBeWorkflow(follower.type, follower.destination)) {
    return false;
  }
  if (!definitions_.MustRead(follower.type, follower.destination)) return true;
  // A workflow state written before definitions were kept is not a line of
  // a batch (the head was read the same way in StartDueEvents).
  OUTBOX_ASSIGN_OR_RETURN(std::optional<WorkflowRecord> record,
                          ReadWorkflowRecord(follower.id));
  return !record.has_value() || record->state.empty();
}

bool AgentImpl::SendBatch(std::vector<PendingEvent> batch, std::string body,
                          const Destination& destination, absl::Time now) {
  // Even one event goes as a batch: the receiver asked for that format.
  if (!RateAllows(destination, Steady())) return false;  // a later round
  const int64_t count = static_cast<int64_t>(batch.size());
  const int64_t bytes = static_cast<int64_t>(body.size());
  const uint64_t tag = next_tag_++;
  std::vector<const PendingEvent*> events;
  for (const PendingEvent& e : batch) events.push_back(&e);
  HttpRequest request =
      BuildBatchRequest(events, std::move(body), destination, now, tag);
  internal::CrashPoint(internal::kAgentBeforeSend);
  absl::Status started = http_->StartRequest(std::move(request));
  if (absl::IsResourceExhausted(started)) return false;  // next round
  if (!started.ok()) {
    // Refused by the transport itself: sending it again cannot help (as
    // for one event, Send()).
    for (PendingEvent& e : batch) {
      DeadLetterUnsent(std::move(e), AgentMetrics::DeadReason::kUnsendable,
                       absl::StrCat("cannot be sent: ", started.message()));
    }
    return true;
  }
  ++stats_.requests;
  RateTook(destination, count, bytes);
  const bool probe = reachability_.OnSend(destination.name);
  for (const PendingEvent& e : batch) in_flight_seqs_.insert(e.seq);
  PendingEvent head = std::move(batch[0]);
  batch.erase(batch.begin());
  in_flight_.emplace(tag, InFlight{std::move(head), &destination, probe,
                                   nullptr, std::move(batch)});
  return true;
}

bool AgentImpl::Send(PendingEvent event, const Destination& destination,
                     absl::Time now) {
  // Its lane opened with a token left, but the round may have spent it.
  if (!RateAllows(destination, Steady())) return true;  // stays pending
  const uint64_t tag = next_tag_++;
  absl::Status started =
      SenderFor(destination)->Start(event, destination, now, tag);
  if (absl::IsResourceExhausted(started)) return false;  // next round
  // Nothing left: the broker is down or refused the connection at once, or
  // TLS cannot be set up, or it refuses this client at once (a Kafka topic
  // not authorized). Handled as that result, not an attempt.
  const bool refused = absl::IsPermissionDenied(started);
  const bool never_left = absl::IsUnavailable(started) ||
                          absl::IsFailedPrecondition(started) || refused;
  if (!started.ok() && !never_left) {
    // The sender refused this event itself (e.g. a Content-Type with a line
    // break, a type that makes no MQTT topic): sending it again cannot
    // help.
    DeadLetterUnsent(std::move(event), AgentMetrics::DeadReason::kUnsendable,
                     absl::StrCat("cannot be sent: ", started.message()));
    return true;
  }
  if (!never_left) {
    ++stats_.requests;
    RateTook(destination, 1, static_cast<int64_t>(event.payload.size()));
  }
  const bool probe = reachability_.OnSend(destination.name);
  in_flight_seqs_.insert(event.seq);
  in_flight_.emplace(
      tag, InFlight{std::move(event), &destination, probe, nullptr, {}});
  if (never_left) {
    SendResult unsent;
    unsent.tag = tag;
    unsent.offline = absl::IsUnavailable(started);
    if (refused) {
      // Refused at once (a Kafka topic not authorized): an answer, read as
      // the broker's refusal would be.
      unsent.outcome = DeliveryOutcome::kHoldDestination;
      unsent.answer = std::string(started.message());
    } else {
      unsent.transport = started;  // never left: not an answer
    }
    HandleResult(unsent);
  }
  return true;
}

void AgentImpl::DeadLetterUnsent(PendingEvent event,
                                 AgentMetrics::DeadReason why,
                                 std::string reason) {
  dead_reasons_[event.seq] = why;
  Settlement s;
  s.kind = Settlement::Kind::kDeadLetterUnsent;
  s.event = std::move(event);
  s.reason = std::move(reason);
  settled_.push_back(std::move(s));
}

absl::Status AgentImpl::PauseIfDiskFull(const absl::Status& s) {
  if (!absl::IsResourceExhausted(s)) return s;
  // Pause sending until there may be room, rather than fail the loop: the
  // work that failed was not done, and is done again after the pause.
  if (Steady() >= store_full_until_) {
    Log(LogSeverity::kError, LogEvent::kDiskFull,
        absl::StrCat("store cannot write (", s.message(),
                     "); pausing deliveries for ",
                     absl::FormatDuration(kFullDiskPause)));
  }
  store_full_until_ = Steady() + kFullDiskPause;
  return absl::OkStatus();
}

bool AgentImpl::RateAllows(const Destination& destination, absl::Time steady) {
  if (rate_limiters_.empty()) return true;
  auto it = rate_limiters_.find(destination.name);
  if (it == rate_limiters_.end() || it->second.MayStart(steady)) return true;
  rate_wake_ = std::min(rate_wake_, it->second.NextStart(steady));
  return false;
}

void AgentImpl::RateTook(const Destination& destination, int64_t events,
                         int64_t bytes) {
  if (rate_limiters_.empty()) return;
  auto it = rate_limiters_.find(destination.name);
  if (it != rate_limiters_.end()) it->second.Took(Steady(), events, bytes);
}

void AgentImpl::ArmTimer(absl::Time when) {
  // Armed to fire no later than that already: a system call saved per
  // round (timerfd_settime was 9% of a busy drain's CPU samples). A timer
  // that fires early only runs a round for nothing, which arms it again.
  // (InfinitePast, "due now", is also what armed_for_ says once the timer
  // fired: always arm for it.)
  if (armed_for_ != absl::InfinitePast() && armed_for_ <= when &&
      when != absl::InfinitePast()) {
    return;
  }
  armed_for_ = when;
  absl::Status armed;
  if (when == absl::InfiniteFuture()) {
    armed = timer_->Disarm();
  } else {
    // At least 1 ms, so a deadline just past does not spin the loop.
    absl::Duration delay = std::max(when - Steady(), absl::Milliseconds(1));
    delay = std::min(delay, absl::Hours(24));  // re-evaluate at least daily
    armed = timer_->Arm(delay);
  }
  // Cannot fail on a valid timer; if it did, the loop would sleep until the
  // next commit or network event instead, so say so.
  if (!armed.ok()) {
    Log(LogSeverity::kError, LogEvent::kInternalError,
        absl::StrCat("timer: ", armed.message()));
  }
}

namespace {

// The `kind` label of outbox_destination_info.
const char* KindLabel(Destination::Kind kind) {
  switch (kind) {
    case Destination::Kind::kHttp:
      return "http";
    case Destination::Kind::kMqtt:
      return "mqtt";
    case Destination::Kind::kKafka:
      return "kafka";
  }
  return "http";
}

}  // namespace

void AgentImpl::WriteMetricsIfDue(absl::Time steady) {
  if (metrics_.Due(steady)) WriteMetrics();  // as of now, after the round
}

void AgentImpl::WriteMetrics() {
  const absl::Time steady = Steady();
  metrics_.Write(MetricsLoop(steady), steady);
}

MetricsWriter::Loop AgentImpl::MetricsLoop(absl::Time steady) const {
  MetricsWriter::Loop loop;
  loop.in_flight = in_flight_.size();
  for (const Destination& d : config_.destinations) {
    AgentMetrics::DestinationState& state = loop.destinations.emplace_back();
    state.name = d.name;
    state.kind = KindLabel(d.kind);
    state.snapshot = reachability_.Of(d.name, steady);
    state.fuse_tripped = fuse_.tripped(d.name);
  }
  return loop;
}

}  // namespace outbox
