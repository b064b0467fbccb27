// Copyright (c) edge-outbox authors.
//
// Store: an embedded transactional outbox. A business record and its
// outgoing events are committed together or not at all; events then wait in
// the store until the delivery agent marks them delivered or dead.

#ifndef OUTBOX_LIB_INCLUDE_OUTBOX_STORE_H_
#define OUTBOX_LIB_INCLUDE_OUTBOX_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "outbox/event.h"
#include "outbox/histogram.h"
#include "outbox/options.h"
#include "outbox/txn.h"

namespace outbox {

// What Store::Commit did.
struct CommitResult {
  // The ids of the committed events, in Emit order.
  std::vector<std::string> event_ids;
  // True if the idempotency key had already been committed: nothing was
  // written, and event_ids/response are those of the first commit.
  bool duplicate = false;
  // The response stored by the first commit with this idempotency key.
  std::string response;
};

// A pending entry that NextDue could not hand out.
struct UnreadableEntry {
  uint64_t seq = 0;
  // kDataLoss naming the key when the stored value does not decode (pass
  // `seq` to Quarantine()); the read error otherwise.
  absl::Status why;
};

// Events ready for delivery, from Store::NextDue.
struct DueEvents {
  // Due events in commit order; at most one per ordering key.
  std::vector<PendingEvent> events;
  // Pending entries that could not be read or decoded, each with its seq.
  // They block nothing.
  std::vector<UnreadableEntry> unreadable;
  // The earliest time an event that is waiting for its retry time becomes
  // due (absl::InfiniteFuture() if none): when to look again. `wait` is the
  // same as a delay from now, measured on the monotonic clock: schedule with
  // it, since the wall clock may be set at any moment.
  absl::Time next_due = absl::InfiniteFuture();
  absl::Duration wait = absl::InfiniteDuration();
};

// Outcome of one failed delivery attempt, for Store::RecordAttempt.
struct AttemptRecord {
  std::string error;        // short, never containing payload or secrets
  int http_status = 0;      // 0: no HTTP answer
  absl::Time next_attempt;  // when the event is due again
  // The event's retry age after this attempt (PendingEvent::retry_age);
  // InfiniteDuration() keeps the one the store computes: the wall-clock time
  // since the previous attempt added to the stored age.
  absl::Duration retry_age = absl::InfiniteDuration();
  // The wall-clock time of the attempt, which `next_attempt` was computed
  // from. If the clock is set back before the store records it, the event
  // still waits `next_attempt - decided`, not the jump. InfinitePast: the
  // time the store records it.
  absl::Time decided = absl::InfinitePast();
};

// A lane's backlog (Store::PendingByLane). Plain data.
struct LanePending {
  std::string destination;  // the one the events name; empty: routed by type
  std::string type;
  std::string target;  // Store::Relane's; empty: none
  uint64_t events = 0;
};

// A lane: the pending events that share a destination name (Event::
// destination, often empty), an event type and a target. The agent routes a
// lane as a whole, so NextDue asks once per lane whether its events may go.
struct Lane {
  uint32_t id = 0;  // dense, stable while the store is open
  absl::string_view destination;
  absl::string_view type;
  // The destination this workflow event's next request needs (Store::
  // Relane); empty: not recorded (every event but held workflow events).
  absl::string_view target;
};

// What NextDue may take from a lane.
enum class LaneGate {
  kClosed,  // nothing (destination paused or unreachable)
  kOne,     // at most one event (a probe of an unreachable destination)
  kOpen,    // as many as are due
};

// What the delivery of one event came to, for Store::Settle.
struct Settlement {
  enum class Kind {
    kDelivered,   // removed from the queue, counted in delivered_total
    kAttempt,     // a failed attempt: `attempt` recorded, due again later
    kDeadLetter,  // `attempt` recorded as the last one, then dead-lettered
    kDeadLetterUnsent,  // dead-lettered as it is (it could not be sent)
    // A step (or a revert) of the event's workflow finished: the event stays
    // pending for the next one, due at once, with its attempts and retry age
    // reset, so each step has its own retry budget.
    kStepDone,
  };
  Kind kind = Kind::kDelivered;
  PendingEvent event;     // as NextDue returned it
  AttemptRecord attempt;  // kAttempt and kDeadLetter
  std::string reason;     // kDeadLetter*: why it was given up
  // The agent's workflow engine (agent/workflow/) writes the event's
  // workflow in the same batch, so the queue and the workflow agree after a
  // power cut: `workflow_state`, the new encoded outbox.storage.
  // WorkflowState (empty: none written), and result rows, encoded
  // outbox.storage.StepResult, numbered from `first_result`. A state whose
  // phase is COMPLETED, settled kDelivered while a cancel of the event is
  // recorded, is written as kStepDone instead: the event stays pending so
  // that the cancel is compensated, whichever of the two came first.
  std::string workflow_state;
  std::vector<std::string> workflow_results;
  uint32_t first_result = 0;
  // The step of `workflow_state` whose "sent" mark this write sets (the
  // agent sends that step only once the write is durable, after looking for
  // a cancel: reading the workflow back, or seeing that CancelCount() has
  // not moved since its last read), or -1. A cancel recorded before this
  // write is seen then, so the step will not be sent: the store then
  // writes the state without the mark, and compensation does not resend a
  // step that never went out.
  int32_t workflow_marked_step = -1;
  // A workflow definition to keep, written under `workflow_definition_id`
  // in the same batch (Store::ListWorkflowDefinitions), or empty. The agent
  // sets it with the first state it writes that names a definition not yet
  // stored, so the state never names one the store lacks.
  std::string workflow_definition_id;
  std::string workflow_definition;
};

// What Store::Settle did.
struct SettleResult {
  size_t applied = 0;
  // Events that were no longer pending (delivered or dead-lettered already,
  // or listed twice): nothing was written for them.
  std::vector<std::string> not_pending;
  // Workflow events settled kDelivered with a COMPLETED state that a cancel
  // recorded meanwhile kept pending (as kStepDone) for compensation: their
  // next request is a revert, so this write must be durable first.
  std::vector<std::string> kept_for_cancel;
  // This write's mark: it is durable once Store::DurableMark() reaches it.
  // Marks rise with every write; 0 when nothing was written.
  uint64_t written = 0;
};

// A workflow as stored (Store::GetWorkflow).
struct WorkflowRecord {
  // Encoded outbox.storage.WorkflowState; empty when no step has finished
  // yet (nothing is stored for a workflow until then).
  std::string state;
  // Txn::Cancel's record, if the event was cancelled.
  bool cancelled = false;
  std::string cancel_reason;
  absl::Time cancelled_at = absl::InfinitePast();
};

// Figures about the queue, from Store::GetStats.
struct Stats {
  uint64_t pending_events = 0;
  uint64_t pending_bytes = 0;  // stored size of pending entries
  // Age of the oldest pending event (zero when none is pending).
  absl::Duration oldest_pending_age = absl::ZeroDuration();
  uint64_t dead_letters = 0;
  uint64_t delivered_total = 0;  // since the store was created
  // Dead letters deleted by PurgeDeadLetters or PurgeDeadLetter, since the
  // store was created.
  uint64_t dead_letters_purged = 0;
  // Workflows stopped because a revert failed for good, waiting for an
  // operator (outboxctl show / retry-step).
  uint64_t workflows_needing_attention = 0;
  // Events given up by their class's policy since the store was created
  // (Options::event_classes): evicted (on_full drop_oldest), of which
  // deleted without a dead letter (keep_evicted false), and expired.
  uint64_t evicted_total = 0;
  uint64_t evicted_deleted_total = 0;
  uint64_t expired_total = 0;
  // Pending events per class of Options::event_classes, in its order
  // (events of no class are not listed). Kept in memory by an open store.
  struct ClassPending {
    std::string name;
    int priority = 0;
    uint64_t events = 0;
    uint64_t bytes = 0;
  };
  std::vector<ClassPending> classes;
  // Size of the files in the store's directory (RocksDB's tables, logs and
  // manifests), from a listing of the directory: a few dozen files, never a
  // scan of the entries.
  uint64_t disk_bytes = 0;
  // How long Commit took (to its OK, fsync included), for the commits made
  // through this Store object since it was opened. Kept in memory only, so a
  // read-only open, or any other process, sees none.
  Histogram commit_latency;
};

// What Store::Verify read, and what disagreed.
struct VerifyReport {
  uint64_t pending_entries = 0;
  uint64_t dead_letters = 0;
  uint64_t idempotency_keys = 0;
  uint64_t workflows = 0;      // stored workflow states
  uint64_t workflow_rows = 0;  // their result rows
  // The on-disk features the store records (docs/firmware-updates.md), each
  // as "<set>:<name> (first used by <library version>)".
  std::vector<std::string> features;
  // Each disagreement found, naming its column family and key or counter:
  // a counter that is not what it counts, an index key without what it
  // indexes or the reverse, a value that does not decode, a running
  // workflow whose event is not pending. Empty when the store is sound.
  std::vector<std::string> problems;
};

// An outbox store on local disk (RocksDB inside).
//
// A Store is safe for concurrent access from multiple threads without any
// external synchronization: typically the firmware commits from one thread
// while the delivery agent reads and marks events from another. Writes are
// serialized internally. One process opens a store at a time.
class Store {
 public:
  // Opens (or creates, see Options::create_if_missing) the store at `path`.
  // A new store's directory is made 0700 whatever the umask: RocksDB's files
  // inside are as readable as the umask makes them, so the directory is what
  // keeps every event private to its owner.
  // Errors:
  //   kInvalidArgument     bad Options (table names).
  //   kNotFound            no store at `path` and create_if_missing is false.
  //   kFailedPrecondition  `path` holds something that is not an outbox store,
  //                        a store of a newer schema version or with an
  //                        on-disk feature this library must not write (the
  //                        message names it and the version that wrote it;
  //                        nothing in the store was changed), or tables that
  //                        Options does not name; or the store's directory
  //                        gives group or others any access (the message
  //                        says the chmod 700 that fixes it).
  //   kDataLoss            the store's own metadata is corrupt, or a table
  //                        the store recorded has disappeared.
  //   kUnavailable         the store is open elsewhere (another process).
  static absl::StatusOr<std::unique_ptr<Store>> Open(const Options& options,
                                                     const std::string& path);

  // Opens the store at `path` for reading only, alongside a process that may
  // have it open for writing (e.g. outboxctl next to a running agent). It
  // sees the store as of the open. Every table of the store is readable;
  // Options::tables and create_if_missing are ignored. Writes fail with
  // kFailedPrecondition. Errors: as Open, but kNotFound if there is no store;
  // a feature this library can read but not write (ro_compat,
  // docs/firmware-updates.md) is no error here.
  static absl::StatusOr<std::unique_ptr<Store>> OpenReadOnly(
      const Options& options, const std::string& path);

  // The record tables of the store at `path`, without opening it (for tools
  // that must pass Options::tables). Errors: kNotFound, kFailedPrecondition.
  static absl::StatusOr<std::vector<std::string>> ListTables(
      const std::string& path);

  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Closes the store (see Close) if it is still open.
  virtual ~Store() = default;

  // Syncs the write-ahead log and closes the store, reporting any error.
  // If the store clock (StoreClockNow) moved a minute or more since the last
  // write, one empty synced write keeps it first. Every later call fails
  // with kFailedPrecondition.
  // REQUIRES: no other call on this Store is in progress or will start.
  virtual absl::Status Close() = 0;

  // Writes every record and event of `txn` in one atomic batch (fsync'ed when
  // Options::sync). On OK the records are readable and the events pending.
  // Errors (nothing was written, unless noted):
  //   kInvalidArgument     the txn is empty or has an invalid part.
  //   kResourceExhausted   the pending queue is full (Options limits), or the
  //                        disk is full; free space and retry.
  //   kFailedPrecondition  an earlier write failed in a way that leaves the
  //                        log's state unknown; reopen the store.
  //   kUnavailable         an I/O error. The batch may or may not be present
  //                        after a reopen (never half of it). Retrying the same
  //                        Txn keeps the same event ids; set an idempotency
  //                        key to make the retry exactly-once in the store.
  virtual absl::StatusOr<CommitResult> Commit(const Txn& txn) = 0;

  // Returns the value of `key` in the record table `table`.
  // Errors: kNotFound (no such key), kInvalidArgument (unknown table).
  virtual absl::StatusOr<std::string> Get(absl::string_view table,
                                          absl::string_view key) = 0;

  // Returns up to `limit` events that are due now: pending, next_attempt <=
  // now, and first of their ordering key (no earlier pending event with the
  // same key), in (due time, commit) order. `gate` is called once for each
  // lane that has an event due and says how many of its events may be taken;
  // `skip` lets the caller pass over events it is already sending. Events of
  // a closed lane and skipped events still hold later events of their
  // ordering key. The work done grows with the lanes and with `limit`, never
  // with events that are not taken: a closed lane costs one call.
  // Due times are kept on a monotonic clock while the store is open, so a
  // wall clock set back or forward neither stalls nor rushes the queue; at
  // open, a stored due time that lies further ahead than its own delay (the
  // clock went back since it was written) is shortened to that delay.
  virtual absl::StatusOr<DueEvents> NextDue(
      size_t limit, absl::FunctionRef<LaneGate(const Lane&)> gate,
      absl::FunctionRef<bool(uint64_t seq)> skip) = 0;
  absl::StatusOr<DueEvents> NextDue(size_t limit) {
    return NextDue(
        limit, [](const Lane&) { return LaneGate::kOpen; },
        [](uint64_t) { return false; });
  }

  // Moves pending `event` into the lane of (its destination, its type,
  // `target`): the destination its workflow's next request needs, which is
  // closed (empty: not known). NextDue then asks about that lane alone, so
  // the events waiting for one closed destination cost one gate call per
  // round, however many they are, and other events and workflows are not
  // held with them. A hint kept in memory only, nothing is written: a reopen
  // puts every event back in its untargeted lane. A Settle of kStepDone (the
  // next request is not known yet) and a committed cancel of the event's
  // workflow (its compensation's requests may go elsewhere) put it back too;
  // and so does this call itself when a cancel is stored that the caller's
  // plan did not see (`saw_cancel` false), so that a cancel racing the plan
  // is not left behind a closed destination. No-op if `event` is not
  // pending or the store is closed.
  virtual void Relane(const PendingEvent& event, absl::string_view target,
                      bool saw_cancel) = 0;

  // The pending events queued behind `head` under its ordering key, oldest
  // first, at most `limit`, read like NextDue's (entries that cannot be read
  // end the list). They are never due by themselves while `head` is pending
  // (only a key's first event is), so a destination that takes batches may
  // send them after `head` in the same request: the key's order holds, and
  // the batch is settled as one. Empty for an unkeyed event, or once `head`
  // is no longer its key's first. Costs O(limit), whatever the backlog.
  virtual absl::StatusOr<std::vector<PendingEvent>> KeyFollowers(
      const PendingEvent& head, size_t limit) = 0;

  // Applies the outcome of several deliveries in one write: the agent
  // settles everything one round of its loop finished at once.
  // Durability: the write is NOT fsync'ed, whatever Options::sync says. It
  // becomes durable when any later synced write (a Commit with Options::sync,
  // or Sync()) returns; a power cut before that may lose it, and then the
  // events are pending again and are sent again with the same ids, which the
  // at-least-once promise allows. Each write is still all or nothing.
  // Errors: as MarkDelivered; events no longer pending are listed in
  // SettleResult::not_pending instead of failing the call.
  virtual absl::StatusOr<SettleResult> Settle(
      const std::vector<Settlement>& settlements) = 0;

  // Makes every write that returned before this call durable (one fsync of
  // the log, shared with concurrent writers). Errors: as Commit.
  virtual absl::Status Sync() = 0;

  // Asks that every write up to `mark` (SettleResult::written) become
  // durable, and returns at once: a background thread of the store syncs
  // the log, unless a synced write (a Commit under Options::sync, Sync())
  // covers it first, and then calls the wakeup (SetWakeup). Several
  // requests made meanwhile share one sync, and writes queued while it
  // syncs wait for it as behind a synced Commit (and may ride along).
  // Errors: kFailedPrecondition if the store is closed; an earlier
  // background sync's failure (the store then refuses writes until it is
  // reopened, as after a failed write: the next open settles what the log
  // holds). A sync that found the disk full is dropped: the write that
  // finds room again makes every earlier write durable.
  virtual absl::Status RequestSync(uint64_t mark) = 0;

  // The highest mark whose writes are durable (0: none since the store was
  // opened; everything stored before the open is durable). Thread-safe and
  // lock-free: a loop may read it every round.
  virtual uint64_t DurableMark() const = 0;

  // How many workflow cancels (Txn::Cancel, CancelByIdempotencyKey) this
  // store has written since it was opened; it never falls. A cancel counts
  // once it can be read, before its Commit returns. So a caller that reads
  // this, then a workflow, and later finds it unchanged knows that no cancel
  // was written since that read, and that no Settle since found one (and
  // dropped a sent mark for it): the agent then plans a workflow's next
  // step from the state it wrote itself instead of reading it back.
  // Thread-safe and lock-free.
  virtual uint64_t CancelCount() const = 0;

  // The single-event forms of Settle, synced like Commit (Options::sync).
  // Records a failed delivery attempt: attempts + 1, the error, and when to
  // try again. Errors: kNotFound if the event is no longer pending.
  virtual absl::Status RecordAttempt(const PendingEvent& event,
                                     const AttemptRecord& attempt) = 0;

  // Removes a delivered event from the queue. Errors: kNotFound if it is no
  // longer pending.
  virtual absl::Status MarkDelivered(const PendingEvent& event) = 0;

  // Moves a pending event to the dead letters with `reason`. Later events of
  // its ordering key become due. Errors: kNotFound if it is not pending.
  virtual absl::Status MoveToDeadLetters(const PendingEvent& event,
                                         absl::string_view reason) = 0;

  // Moves an undecodable pending entry (see DueEvents::unreadable) to
  // the dead letters, raw bytes kept. Errors: kNotFound.
  virtual absl::Status Quarantine(uint64_t seq) = 0;

  // Moves to the dead letters (reason "expired: ...") up to `limit` pending
  // events of classes with an expire_after (Options::event_classes) that
  // were committed more than that long before `now`, the oldest of each
  // class first, in one write. Returns how many. The caller passes a time
  // it trusts: the agent calls it only while it trusts the wall clock, with
  // a time that a clock jump cannot move forward (docs/configuration.md).
  // Costs O(expired + classes) reads. An event in flight may be expired; its
  // delivery then settles nothing.
  virtual absl::StatusOr<size_t> ExpirePending(absl::Time now,
                                               size_t limit) = 0;
  // The classes the store was opened with (Options::event_classes).
  virtual const std::vector<EventClass>& event_classes() const = 0;

  // Puts the dead letter `event_id` back at the end of the queue with its
  // attempts reset. Its id does not change. Errors: kNotFound;
  // kFailedPrecondition for an undecodable entry, or a workflow's (its steps
  // ran and were compensated: RetryWorkflow resumes one); kResourceExhausted
  // when the queue is full.
  virtual absl::Status Replay(absl::string_view event_id) = 0;

  // Lists pending events in commit order / dead letters in id order, at most
  // `limit` (for tools and tests: these scan). Undecodable pending entries are
  // left out (NextDue reports them); an undecodable dead letter is listed with
  // undecodable = true, its key as id and the decoding error as reason.
  virtual absl::StatusOr<std::vector<PendingEvent>> ListPending(
      size_t limit) = 0;
  virtual absl::StatusOr<std::vector<DeadLetter>> ListDeadLetters(
      size_t limit) = 0;

  // Finds a pending event (by scanning the queue) or a dead letter by id.
  // Errors: kNotFound.
  virtual absl::StatusOr<DeadLetter> FindDeadLetter(absl::string_view id) = 0;
  virtual absl::StatusOr<PendingEvent> FindPending(absl::string_view id) = 0;

  // Forgets idempotency keys committed more than Options::
  // idempotency_window ago on the store clock (StoreClockNow). Returns how
  // many were removed.
  virtual absl::StatusOr<size_t> PurgeExpiredIdempotencyKeys() = 0;

  // Deletes the dead letters that have been dead for more than `older_than`
  // on the store clock (StoreClockNow, DeadLetter::dead_for), except
  // undecodable ones: those hold the only copy of damaged bytes and are kept
  // until an operator deletes them with PurgeDeadLetter. Writes in bounded
  // batches (a backlog of dead letters is never one huge write); a power
  // cut between two leaves the first deleted and counted. Returns how many
  // were deleted; Stats::dead_letters_purged counts them.
  // Errors: kInvalidArgument for a negative `older_than`; write errors.
  virtual absl::StatusOr<size_t> PurgeDeadLetters(
      absl::Duration older_than) = 0;

  // Deletes the dead letter `id`, undecodable or not (an undecodable one is
  // listed under its key as id), counted in Stats::dead_letters_purged.
  // Errors: kNotFound.
  virtual absl::Status PurgeDeadLetter(absl::string_view id) = 0;

  virtual absl::StatusOr<Stats> GetStats() = 0;

  // The pending events of each lane that has any, as of the last durable
  // write: how the agent counts each destination's backlog (its drain ETA).
  // Costs O(lanes), never a scan. Errors: kFailedPrecondition once closed.
  virtual absl::StatusOr<std::vector<LanePending>> PendingByLane() = 0;

  // The newest wall-clock time (Options::clock) of any write this store has
  // made, durable with each write: InfinitePast for a store never written
  // since it learnt to keep one. A clock reading behind it by more than a
  // small tolerance is known to be wrong (a board that booted with a stale
  // time); the agent holds signed deliveries until the clock passes it.
  // Cheap: no I/O.
  virtual absl::Time WallClockMark() const = 0;

  // The store clock's time now: what every deletion by age is measured on
  // (dead-letter retention, the idempotency window, finished workflows). It
  // starts at the wall clock's time when the store is created and advances
  // only with the monotonic clock while the store is open: a wall clock set
  // ahead or back never moves it, nor does time the store spends closed. So
  // nothing is ever deleted earlier than its setting says, and after power
  // cuts and nights off, later by that much. Cheap: no I/O.
  virtual absl::Time StoreClockNow() const = 0;

  // Sets the mark back to the clock's time now, and syncs. For a mark that a
  // clock once set into the future carried forward, which would otherwise
  // hold deliveries until that future time (outboxctl reset-clock-mark).
  // Errors: kFailedPrecondition read-only or closed; the store's write
  // errors.
  virtual absl::Status ResetWallClockMark() = 0;

  // --- Workflows (an event whose type maps to ordered steps; the agent's
  // engine in agent/workflow/ drives them through Settle) ---
  // The stored state and cancel of event `event_id`'s workflow: one read
  // each. Errors: kNotFound when neither is stored.
  virtual absl::StatusOr<WorkflowRecord> GetWorkflow(
      absl::string_view event_id) = 0;
  // The first `limit` result rows (encoded outbox.storage.StepResult) of
  // `event_id`'s workflow, in the order they were written. Empty if none.
  virtual absl::StatusOr<std::vector<std::string>> ListWorkflowResults(
      absl::string_view event_id, size_t limit) = 0;
  // The workflow definitions kept for workflows (Settlement::
  // workflow_definition), as (id, definition) in id order: one per
  // definition a workflow started under, so a few per configuration change,
  // never one per workflow. Empty if none.
  virtual absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
  ListWorkflowDefinitions() = 0;
  // Whether any workflow state is stored (one seek).
  virtual absl::StatusOr<bool> HasWorkflowStates() = 0;
  // Deletes the kept workflow definitions that no stored workflow names and
  // `keep` (the running configuration's) does not list; returns their ids,
  // sorted. Reads the stored workflows only while a definition outside
  // `keep` is still unnamed (oldest first, so usually a few reads), without
  // holding up commits. Errors: read and write errors (kUnavailable,
  // kResourceExhausted for a full disk), kFailedPrecondition once closed.
  virtual absl::StatusOr<std::vector<std::string>> PurgeWorkflowDefinitions(
      const std::vector<std::string>& keep) = 0;
  // Puts the dead letter `event_id` back at the end of the queue (as
  // Replay) and writes `state` (an encoded WorkflowState, e.g. compensation
  // resumed at a step) as its workflow, in one synced write. For outboxctl
  // retry-step. Errors: as Replay; kInvalidArgument if `state` does not
  // decode.
  virtual absl::Status RetryWorkflow(absl::string_view event_id,
                                     absl::string_view state) = 0;
  // Deletes what is stored of the workflows that finished (completed,
  // compensated or needing attention) more than `older_than` ago on the
  // store clock (StoreClockNow; the store stamps it in the write that
  // finishes a workflow; one finished before that stamp existed is judged by
  // its wall-clock finish time against the earlier of the two clocks), so a
  // clock set ahead deletes nothing early: state, cancel and result rows.
  // Returns how many workflows were deleted. Reads the workflows finished
  // longer ago than `older_than` by the wall clock, so its work grows with
  // those, not with the younger ones kept. Errors: kInvalidArgument for a
  // negative `older_than`.
  virtual absl::StatusOr<size_t> PurgeFinishedWorkflows(
      absl::Duration older_than) = 0;

  // Reads every entry, counter and index of the store, writing nothing, and
  // reports what disagrees (outboxctl verify; meant for OpenReadOnly, which
  // sees the store as of the open; on a writable store it reads one
  // snapshot). Costs one pass over the store and memory for the pending and
  // workflow ids. Errors: only read errors; damage is in the report.
  virtual absl::StatusOr<VerifyReport> Verify() = 0;

  // Registers a function called (on the committing thread, after the write)
  // whenever Commit or Replay adds due work; the agent uses it to wake up.
  // It must be cheap and must not call back into the Store. Replaces any
  // earlier one; an empty function unregisters.
  virtual void SetWakeup(std::function<void()> wakeup) = 0;
};

}  // namespace outbox

#endif  // OUTBOX_LIB_INCLUDE_OUTBOX_STORE_H_
