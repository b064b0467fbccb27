// Copyright (c) edge-outbox authors.
//
// AgentImpl: the delivery loop behind outbox/agent.h.
//
// One thread, one Poller (platform/poller.h): each sender's fd (send/sender.h:
// the HTTP transport's sockets and curl timers, each MQTT broker connection), a
// Wakeup (Store::Commit wake-ups and Stop()), a Timer (the
// next retry, probe or housekeeping time) and, where allowed, a netlink socket
// (network changes). Each round (Step) does all ready work without blocking:
// finish requests, start due events, arm the timer. Between rounds the thread
// sleeps in Poller::Wait, so an idle or offline device uses no CPU.
//
// Reachability is per destination. A request that never reached its
// receiver (DNS, refused, unreachable, connect timeout) is not an attempt:
// the event stays as it was, and the destination is marked unreachable. Its
// events then wait, except one probe at a time on a backoff timer
// (probe_interval_min doubling to probe_interval_max), or at once when the
// network changes. The first answer of any kind makes it reachable again.

#ifndef OUTBOX_AGENT_AGENT_IMPL_H_
#define OUTBOX_AGENT_AGENT_IMPL_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "agent/agent_variant.h"
#include "agent/clock_trust.h"
#include "agent/config/config.h"
#include "agent/dead_letter_fuse.h"
#include "agent/rate_limiter.h"
#include "agent/reachability.h"
#include "agent/send/batcher.h"
#include "agent/send/http_sender.h"
#include "agent/send/sender.h"
#include "agent/telemetry/agent_metrics.h"
#include "agent/telemetry/log_limiter.h"
#include "agent/telemetry/metrics_writer.h"
#include "agent/workflow/definitions.h"
#include "agent/workflow/plan.h"
#include "outbox/agent.h"
#include "platform/netlink_monitor.h"
#include "platform/poller.h"

namespace outbox {

// The delivery loop under one configuration: what Agent's methods do
// (agent.cc's Agent forwards to it, and replaces it on Reload). Its own
// fields of `options` are the transport, log, clock, watch_network and
// shutdown_grace; the configuration comes parsed.
class AgentImpl final : private Batcher::Port {
 public:
  static absl::StatusOr<std::unique_ptr<AgentImpl>> Create(
      Store* store, AgentOptions options, AgentConfig config,
      const AgentTestOptions& test);
  ~AgentImpl();

  absl::Status Run();
  absl::StatusOr<uint64_t> Drain();
  absl::Status RunOnce(absl::Time deadline);
  int fd() const { return poller_->fd(); }
  void Stop();
  void Interrupt();
  absl::Status ResumeDestination(absl::string_view name);
  AgentStats stats() const;
  // Runs until stopped: Stop() first. Unlike Run(), an Interrupt() does not
  // end it, so the requests in flight finish (or the grace ends) whatever
  // comes meanwhile.
  absl::Status RunUntilStopped();
  // Makes fd() readable, so a caller that polls it runs a round at once
  // (a new loop's due events, retries and abandoned requests).
  void Wake() { wakeup_->Signal(); }
  // The HTTP transport, for the loop that replaces this one. REQUIRES:
  // stopped (Run() returned after Stop()), so nothing is in flight in it.
  std::unique_ptr<HttpTransport> TakeTransport();

 private:
  // What a workflow's plan was made from.
  struct PlanBasis {
    bool saw_cancel = false;  // a cancel of it was recorded
    // Store::CancelCount() before the workflow was last read from the store
    // (the plans made since from what the agent wrote carry it on).
    uint64_t cancels = 0;
  };
  // A workflow step (or revert) in flight: what was planned for it.
  struct WorkflowFlight {
    WorkflowRun run;
    WorkflowAction action;
    PlanBasis basis;
    // Its step was known not done (not_done_steps_) when this send left.
    bool was_not_done = false;
  };
  // A workflow's state as the agent wrote it (a step's sent mark in it),
  // decoded, and what it runs under: its next step is planned from this
  // once the write is durable, without reading it back, while Store::
  // CancelCount() is still `cancels` (no cancel written since the agent
  // last read it from the store, so none the store applied unseen).
  struct WorkflowMemo {
    storage::WorkflowState state;
    WorkflowRun run;
    uint64_t cancels = 0;
  };
  struct InFlight {
    PendingEvent event;
    const Destination* destination;
    bool probe;  // sent while its destination was unreachable
    std::unique_ptr<WorkflowFlight> workflow;  // null: a plain event
    // A batch's events after `event` (its first), in body order.
    std::vector<PendingEvent> batch_rest;
  };

  AgentImpl(Store* store, AgentOptions options, AgentConfig config,
            const AgentTestOptions& test);
  absl::Status Init();

  // The agent's own schedule (probes, retries' wake-ups, pauses) runs on the
  // monotonic clock, so setting the wall clock neither stalls nor rushes it.
  // Wall-clock time is used only for what leaves the device or is stored:
  // webhook timestamps, Retry-After dates, next-attempt times.
  absl::Time Steady() const { return absl::UnixEpoch() + clock_->Monotonic(); }

  // Rounds until stopped, or (`until_interrupted`) until Interrupt().
  absl::Status Loop(bool until_interrupted);
  // One round of ready work; never blocks.
  absl::Status Step();
  void DrainWakeups();
  // True once Stop() was asked for and the round has wound down.
  absl::Status StopIfAsked(bool* stopping);
  void HandleResult(const SendResult& result);
  // Takes the request `tag` out of what is in flight (its events are no
  // longer in flight; its destination heard back); none if it was
  // abandoned earlier.
  std::optional<InFlight> TakeFlight(uint64_t tag);
  // The retry policy `flight`'s answer is decided under (`*early` holds
  // the broken variant's, AgentTestOptions::give_up_an_attempt_early).
  const RetryPolicy& PolicyFor(const InFlight& flight,
                               RetryPolicy* early) const;
  // The request never reached its receiver (Decision::kOffline): its
  // destination may now be unreachable; nothing is settled.
  void NoteNeverReached(const InFlight& flight, const Decision& d);
  // What decision `d` does beyond settling `flight`'s events: logs a retry
  // or a dead letter, pauses the destination when told to.
  void ActOnDecision(const InFlight& flight, const Decision& d, absl::Time now);
  // The receiver refused the device (Decision::kHoldDestination): hold the
  // destination, record nothing.
  void HoldRefused(const InFlight& flight, const Decision& d);
  // An answer came for `flight`, decided `d` (an attempt: not offline, not
  // a refusal of the device): what it tells of the destination, its
  // reachability and its fuse. False when the fuse holds the events (they
  // are settled as failed attempts already: nothing more to do).
  bool NoteAnswer(InFlight* flight, const SendResult& result, const Decision& d,
                  absl::Time now);
  // The dead-letter fuse's say on `d` for `flight` (DeadLetterFuse): whether
  // the events stay pending and the destination is held instead (true:
  // done with the result), or go on as decided; `*trips` when they are the
  // last the fuse lets through (hold the destination after them). Plain
  // events and batches only: workflow steps are not counted.
  bool FuseHolds(const InFlight& flight, const SendResult& result,
                 const Decision& d, bool* trips);
  // Settles `flight`'s events, which `d` would dead-letter, as failed
  // attempts instead, due again after their backoff: the fuse holds them.
  void HoldForFuse(InFlight* flight, const Decision& d, absl::Time now);
  // Holds `flight`'s destination as for a refusal (one probe at a time,
  // backing off), logging when that starts.
  void TripFuse(const InFlight& flight, const SendResult& result);
  // Processes the senders whose fd is ready and handles what finished.
  void ProcessSenders();
  // The sender of `destination`'s kind (for MQTT, its own connection).
  Sender* SenderFor(const Destination& destination) const;
  // One round's starts: what became durable, then what NextDue gives,
  // then the batches; the round's settlements written (EndRound).
  absl::Status StartDueEvents();
  // NextDue for up to the free request slots (and what batches may take
  // more), through this round's gates, passing over what is in flight,
  // awaits its write, or is settled in this round.
  absl::StatusOr<DueEvents> ReadDue(absl::Time steady);
  // Moves damaged pending entries aside, counted and logged.
  void QuarantineUnreadable(const std::vector<UnreadableEntry>& unreadable);
  // Starts the due `events` (a workflow's step, a request, a place in a
  // batch) until max_in_flight requests are in flight (Full) or the
  // transport is full. Errors: the store's (the round stops there).
  absl::Status StartEvents(std::vector<PendingEvent>* events, absl::Time now);
  // Writes the round's settlements; looks again at once when an event left
  // the queue; notes whether the agent is idle.
  absl::Status EndRound(absl::Time steady);
  // Whether a request still out carries an event of `event`'s ordering key.
  // The store lets a key's next event be due once the first leaves the
  // queue, and expiry or eviction can take it out while its request is
  // still out: it keeps its key's place until its answer is settled, or the
  // receiver could see the two in reverse order. `keys` is filled on first
  // use each round.
  bool KeyInFlight(const PendingEvent& event,
                   std::optional<absl::flat_hash_set<std::string>>* keys) const;
  // Judges the wall clock against the store's mark (ClockTrust); logs a
  // change. While it is wrong, lanes to destinations that time-stamp stay
  // closed (GateFor) and the loop looks again every kClockRecheck.
  void CheckClock();
  static constexpr absl::Duration kClockRecheck = absl::Seconds(1);
  // How much NextDue may take from `lane` this round (probing_ holds the
  // destinations already given their one probe).
  LaneGate GateFor(const Lane& lane, absl::Time steady);
  // Queues the settlement that dead-letters `event` unsent (a request no
  // sender can make), and why, for metrics.
  void DeadLetterUnsent(PendingEvent event, AgentMetrics::DeadReason why,
                        std::string reason);
  // Starts `event` toward `destination`; false when the transport is full.
  bool Send(PendingEvent event, const Destination& destination, absl::Time now);

  // --- Batches (Batcher::Port: the loop's side of send/batcher.h) ---
  bool Full() const override;
  absl::StatusOr<bool> MayRide(const PendingEvent& follower,
                               const Destination& destination,
                               absl::Time now) override;
  bool SendBatch(std::vector<PendingEvent> batch, std::string body,
                 const Destination& destination, absl::Time now) override;
  // Settles a batch's events after its first as `result` says for each.
  void SettleBatchRest(InFlight* flight, const SendResult& result,
                       absl::Time now);

  // --- Workflows (workflow/agent_workflow.cc) ---
  // What TryWorkflowEvent did with an event whose type may have a workflow.
  enum class WorkflowStart {
    kTaken,  // planned: sent, settled, or marked
    kFull,   // the transport is full: next round
    kPlain,  // not a workflow's: route it as a plain event
    kHeld,   // its definition cannot be used: its type is held
  };
  // Finds the definition `*event` runs under and starts it (moving it out
  // of `*event` unless kPlain). Errors: the store's.
  absl::StatusOr<WorkflowStart> TryWorkflowEvent(PendingEvent* event,
                                                 absl::Time now);
  // The stored workflow of event `id`, if any. Errors: the store's.
  absl::StatusOr<std::optional<WorkflowRecord>> ReadWorkflowRecord(
      const std::string& id);
  // PlanWorkflow of `event` under `run` from its stored `record` (null:
  // none).
  WorkflowAction PlanStored(const WorkflowRun& run, const PendingEvent& event,
                            const WorkflowRecord* record, absl::Time now);
  // Plans `event`'s next step from `memo` (see WorkflowMemo) and starts it
  // as StartWorkflowEvent does: kTaken, or kFull.
  WorkflowStart StartFromMemo(PendingEvent event, WorkflowMemo memo,
                              absl::Time now);
  // Carries out `action`, the plan of `event`'s next step under `run`
  // (made from `basis`): sends its request, or settles the workflow when it
  // ended, or leaves it in the lane of the destination it needs while that
  // one may not take a request (HeldForItsDestination); false when the
  // transport is full.
  bool StartWorkflowEvent(PendingEvent event, const WorkflowRun& run,
                          WorkflowAction action, const PlanBasis& basis,
                          absl::Time now);
  // Keeps `state`, which `s` writes, in memos_ when its next step may be
  // planned from it (a forward step marked, no cancel seen).
  void Memo(const Settlement& s, storage::WorkflowState state,
            const WorkflowRun& run, const PlanBasis& basis);
  // Holds every event of `type` (its lanes close) because `why`; logs it
  // once. Lifted by a new agent (a reload or a restart).
  void HoldWorkflowType(const std::string& type, const PendingEvent& event,
                        const absl::Status& why);
  // Starts the workflow events whose last write is durable now
  // (awaiting_durable_), each planned again first: from what is stored, so
  // that a cancel recorded meanwhile is seen, or from what the agent wrote
  // while no cancel was written since (WorkflowMemo). They go before
  // anything NextDue gives: their workflows are under way.
  absl::Status StartDurable(absl::Time now);
  // Keeps the events of the workflow settlements just written (`batch`,
  // its write `written`; `memos` what the agent knows of their states)
  // until that write is durable, and asks the store to sync it in the
  // background.
  absl::Status AwaitDurable(std::vector<Settlement>* batch,
                            const absl::flat_hash_set<std::string>& gone,
                            uint64_t written,
                            absl::flat_hash_map<uint64_t, WorkflowMemo>* memos);
  // The gate of a lane of events that may be workflows'. A lane with a
  // target (Store::Relane: the destination its events' next requests need)
  // is gated by that destination alone, probe included. An untargeted one
  // opens while any destination its type's definitions may use may take a
  // request (or, when the configuration has no workflow for the type, the
  // one its plain events are routed to): each of its events is then planned
  // once, and one whose request's destination is closed is moved to that
  // destination's lane (StartWorkflowEvent).
  LaneGate WorkflowGate(const Lane& lane, absl::Time steady);
  // If `action`'s request may not start now (MayStartWorkflowRequest),
  // moves `event` to the lane of its destination (Store::Relane) and returns
  // true; `saw_cancel`: the plan saw a cancel recorded.
  bool HeldForItsDestination(const WorkflowAction& action,
                             const PendingEvent& event, bool saw_cancel);
  // Whether a workflow request to `destination` may start now: it is open,
  // or its probe is due and given to no one but workflows this round (then
  // this request is the probe).
  bool MayStartWorkflowRequest(absl::string_view destination);
  // The settlement of a workflow request that was answered as `d`.
  Settlement SettleWorkflowAnswer(InFlight flight, const Decision& d,
                                  const HttpResult& result, absl::Time now);
  // Logs what a workflow settlement written in this round changed.
  void LogWorkflowSettlement(const Settlement& s);
  // Keep not_done_steps_ up to date once `s` is written, and once the
  // forward step in `flight` never reached its receiver or was refused.
  void NoteWorkflowSettled(const Settlement& s);
  void NoteNotDone(const InFlight& flight);
  // What a round's write did to workflows (FlushSettlements).
  struct WorkflowWrites {
    bool step_done = false;
    bool revert_done = false;
    bool marked = false;     // a sent mark alone
    bool completed = false;  // with its last step's result
  };
  // Counts, logs and notes `s` once written.
  void NoteWritten(
      const Settlement& s,
      const absl::flat_hash_map<uint64_t, AgentMetrics::DeadReason>& unsent,
      WorkflowWrites* w);
  // Writes every settlement of this round in one (unsynced) store write.
  absl::Status FlushSettlements();
  // Turns the completions in `batch` the store kept for a cancel
  // (SettleResult::kept_for_cancel) into the steps done they were written as.
  static void KeptForCancel(const SettleResult& result,
                            std::vector<Settlement>* batch);
  // Syncs the store once settlements have waited ack_sync_interval, or at
  // once when `now_please` (the agent is idle or stopping).
  absl::Status SyncIfDue(bool now_please);
  absl::Status Housekeeping(absl::Time steady);

  // --- Event classes (agent_classes.cc) ---
  // Every kClassCheck: expires what the store's classes say is too old
  // (only while the clock is trusted), and logs evictions and expiries
  // since the last check, one record each.
  absl::Status CheckClasses(absl::Time steady);
  absl::Status Expire();
  // The wall-clock time expiry may use: now, but never more than the
  // monotonic clock has run since the clock was last found trusted, so a
  // wall clock that jumps ahead expires nothing early.
  absl::Time ExpiryNow();
  void ReportGivenUp();
  // Whether `destination`'s rate limit lets a request start now; if not,
  // when it will (rate_wake_).
  bool RateAllows(const Destination& destination, absl::Time steady);
  // A request of `events` events and `bytes` body bytes started.
  void RateTook(const Destination& destination, int64_t events, int64_t bytes);
  // If `s` says the store's disk is full, starts nothing for kFullDiskPause
  // and returns OK; otherwise returns `s`.
  absl::Status PauseIfDiskFull(const absl::Status& s);
  // Rewrites the metrics file (MetricsWriter) when metrics_interval has
  // passed since the last time; WriteMetrics does it now.
  void WriteMetricsIfDue(absl::Time steady);
  void WriteMetrics();
  // What the metrics file shows of the loop: each destination's
  // reachability and fuse, the requests in flight.
  MetricsWriter::Loop MetricsLoop(absl::Time steady) const;
  // Sleeps until something is ready, at most `limit`; ready_ says what.
  absl::Status Wait(absl::Duration limit = absl::InfiniteDuration());
  // Whether `fd` was in the last Wait's ready list.
  bool IsReady(int fd) const;
  // Arms the timer for `when` on the Steady() clock.
  void ArmTimer(absl::Time when);
  // Hands one record to AgentOptions::log, stamped with clock_->Now().
  // `message` is for humans: never payloads, never secrets.
  void Log(LogSeverity severity, LogEvent event, std::string message,
           absl::string_view event_id = "", absl::string_view destination = "");
  // Writes a record as it is, unlike Log(), which limits the per-event kinds.
  void WriteLog(LogSeverity severity, LogEvent event, std::string message,
                absl::string_view event_id, absl::string_view destination);
  // The log_suppressed record for what `log_limiter_` held back.
  void LogHeld(const LogLimiter::Held& held);
  // LogHeld() for everything still held back (at stop and after a drain).
  void ReportHeldLogs();
  // The store_opened record: what the agent starts with.
  void LogStoreOpened();

  Store* const store_;
  AgentOptions options_;
  const AgentConfig config_;
  const AgentTestOptions test_;
  Clock* const clock_;
  // Webhooks and workflow steps, over one HttpTransport.
  std::unique_ptr<HttpSender> http_;
  // One per MQTT destination, by name: each has its own broker connection.
  absl::flat_hash_map<std::string, std::unique_ptr<Sender>> brokers_;
  // http_ and every broker sender, in a fixed order.
  std::vector<Sender*> senders_;
  std::unique_ptr<NetlinkMonitor> netlink_;

  std::unique_ptr<Poller> poller_;
  std::unique_ptr<Wakeup> wakeup_;  // commits and Stop()
  std::unique_ptr<Timer> timer_;    // retries, probes, housekeeping
  // What the last Wait() found ready, unless a round has used it since.
  std::vector<Poller::Ready> ready_;
  bool ready_known_ = false;
  // The Steady() time the timer is armed for; InfinitePast when it fired.
  absl::Time armed_for_ = absl::InfinitePast();

  absl::flat_hash_map<uint64_t, InFlight> in_flight_;  // by request tag
  // This round's due events bound for batching destinations, packed into
  // requests at the round's end.
  Batcher batcher_;
  absl::flat_hash_set<uint64_t> in_flight_seqs_;
  Reachability reachability_;
  DeadLetterFuse fuse_;  // per destination
  // Destinations with a rate limit (Destination::rate_limit), and the
  // earliest time one of them, closed by it this round, may send again.
  absl::flat_hash_map<std::string, RateLimiter> rate_limiters_;
  absl::Time rate_wake_ = absl::InfiniteFuture();  // Steady()
  // Which definition each workflow runs under (workflow/definitions.h).
  WorkflowDefinitions definitions_;
  // Lanes (UnroutedKey) whose events no route takes: held, until a new
  // agent (a reload, a restart) with a route.
  static std::string UnroutedKey(absl::string_view type,
                                 absl::string_view destination);
  void HoldUnrouted(const PendingEvent& event, const absl::Status& why);
  absl::flat_hash_set<std::string> unrouted_;
  // Event types held because a workflow's definition cannot be used
  // (HoldWorkflowType).
  absl::flat_hash_set<std::string> held_workflow_types_;
  // This round's probes (StartDueEvents clears them): the destinations
  // given theirs (Reachability::Gate), and those of them given to a
  // workflow lane or claimed by a workflow plan whose request has not left
  // yet (MayStartWorkflowRequest).
  absl::flat_hash_set<std::string> probing_;
  absl::flat_hash_set<std::string> workflow_probes_;
  // Whether the wall clock may be put on requests (CheckClock).
  ClockTrust clock_trust_;
  LogLimiter log_limiter_;
  uint64_t next_tag_ = 1;

  // Settlements of this round, written together by FlushSettlements.
  std::vector<Settlement> settled_;
  // Settlements written but not yet synced, since when (Steady()).
  bool unsynced_ = false;
  absl::Time unsynced_since_ = absl::InfiniteFuture();

  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> interrupt_requested_{false};
  absl::Time stop_deadline_ = absl::InfiniteFuture();  // Steady()
  bool stopped_ = false;

  // Steady() times.
  absl::Time next_due_ = absl::InfinitePast();  // from the last NextDue
  absl::Time next_housekeeping_ = absl::InfinitePast();
  static constexpr absl::Duration kClassCheck = absl::Seconds(10);
  absl::Time next_class_check_ = absl::InfinitePast();
  // ExpiryNow's reference: a trusted wall-clock reading and the Steady()
  // time it was taken (InfinitePast: none yet).
  absl::Time expiry_wall_ = absl::InfinitePast();
  absl::Time expiry_steady_ = absl::InfinitePast();
  // Stats' evicted_total and expired_total at the last report.
  std::optional<uint64_t> evicted_seen_, expired_seen_;
  static constexpr absl::Duration kFullDiskPause = absl::Seconds(5);
  absl::Time store_full_until_ = absl::InfinitePast();
  bool idle_ = false;  // the last round started nothing and nothing is due

  AgentStats stats_;
  // The counts, each destination's delivery rate, the metrics file.
  MetricsWriter metrics_;
  // Why each event dead-lettered in this round's settlements (by seq) is,
  // for metrics_ once the write is done.
  absl::flat_hash_map<uint64_t, AgentMetrics::DeadReason> dead_reasons_;
  // Workflow steps known not to have taken effect, by event id: this
  // process wrote the step's sent mark and has not sent it since (only this
  // process can have: a mark is written once, and a step is sent only after
  // reading its mark back), or its last send never reached the receiver, or
  // the receiver refused it (an HTTP answer, a retry scheduled: a receiver
  // that had done it would answer its 2xx again). At compensation such a
  // step is unmarked instead of resent.
  absl::flat_hash_map<std::string, size_t> not_done_steps_;
  // Workflow events whose next request waits for the write that settled
  // their last one (a step's or revert's result, or a step's sent mark) to
  // be durable, oldest write first; their seqs, which NextDue passes over.
  // The store's syncer makes it durable in the background (RequestSync) and
  // wakes the loop, which meanwhile goes on sending everything else. At
  // kMaxAwaitingPerSlot x max_in_flight, no workflow lane opens (GateFor).
  struct Awaiting {
    uint64_t mark;  // SettleResult::written
    PendingEvent event;
    std::optional<WorkflowMemo> memo;  // none: planned from the store
  };
  // The memos of this round's settlements (Memo), by event seq, until the
  // round's write (FlushSettlements) hands them to awaiting_durable_.
  absl::flat_hash_map<uint64_t, WorkflowMemo> memos_;
  static constexpr size_t kMaxAwaitingPerSlot = 4;
  std::deque<Awaiting> awaiting_durable_;
  absl::flat_hash_set<uint64_t> awaiting_seqs_;
  absl::BitGen bitgen_;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_AGENT_IMPL_H_
