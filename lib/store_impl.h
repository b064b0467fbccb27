// Copyright (c) edge-outbox authors.
//
// StoreImpl: the RocksDB-backed Store. Internal; callers use outbox/store.h.

#ifndef OUTBOX_LIB_STORE_IMPL_H_
#define OUTBOX_LIB_STORE_IMPL_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/batch_group.h"
#include "lib/commit_batch.h"
#include "lib/event_classes.h"
#include "lib/keys.h"
#include "lib/latency_histogram.h"
#include "lib/queue_index.h"
#include "lib/rocks_options.h"
#include "lib/store_clock.h"
#include "lib/store_variant.h"
#include "outbox/store.h"
#include "proto/storage.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/write_batch.h"

namespace outbox {

// Opens a store whose files are reached through `env` (borrowed; must
// outlive the store). Tests pass an Env over a fault-injecting FileSystem.
absl::StatusOr<std::unique_ptr<Store>> OpenStoreWithEnv(
    const Options& options, const std::string& path, rocksdb::Env* env,
    bool read_only = false, const StoreTestOptions& test = StoreTestOptions());

// Thread-safety: as Store.
//
// Writes go through one queue of writers, LevelDB's group commit
// (DBImpl::Write): a writer builds its batch under mu_ against tail_ (the
// queue state after every writer ahead of it), queues, and waits. The writer
// at the front becomes the leader: it takes the batches of every queued
// writer, adds the queue state they leave, releases mu_ for one (synced if
// any of them asked) RocksDB write, and on success applies each writer's
// index changes in queue order and wakes them. So concurrent commits share
// one fsync, seqs and counters stay exact and in order, and nobody is
// acknowledged before the sync that covers it.
class StoreImpl final : public Store {
 public:
  ~StoreImpl() override;

  absl::Status Close() override;
  absl::StatusOr<CommitResult> Commit(const Txn& txn) override;
  absl::StatusOr<std::string> Get(absl::string_view table,
                                  absl::string_view key) override;
  using Store::NextDue;
  absl::StatusOr<DueEvents> NextDue(
      size_t limit, absl::FunctionRef<LaneGate(const Lane&)> gate,
      absl::FunctionRef<bool(uint64_t seq)> skip) override;
  void Relane(const PendingEvent& event, absl::string_view target,
              bool saw_cancel) override;
  absl::StatusOr<std::vector<PendingEvent>> KeyFollowers(
      const PendingEvent& head, size_t limit) override;
  absl::StatusOr<SettleResult> Settle(
      const std::vector<Settlement>& settlements) override;
  absl::Status Sync() override;
  absl::Status RequestSync(uint64_t mark) override;
  uint64_t DurableMark() const override { return durable_mark_.load(); }
  uint64_t CancelCount() const override { return cancel_count_.load(); }
  absl::Status RecordAttempt(const PendingEvent& event,
                             const AttemptRecord& attempt) override;
  absl::Status MarkDelivered(const PendingEvent& event) override;
  absl::Status MoveToDeadLetters(const PendingEvent& event,
                                 absl::string_view reason) override;
  absl::Status Quarantine(uint64_t seq) override;
  absl::StatusOr<size_t> ExpirePending(absl::Time now, size_t limit) override;
  const std::vector<EventClass>& event_classes() const override {
    return options_.event_classes;
  }
  absl::Status Replay(absl::string_view event_id) override;
  absl::StatusOr<std::vector<PendingEvent>> ListPending(size_t limit) override;
  absl::StatusOr<std::vector<DeadLetter>> ListDeadLetters(
      size_t limit) override;
  absl::StatusOr<DeadLetter> FindDeadLetter(absl::string_view id) override;
  absl::StatusOr<PendingEvent> FindPending(absl::string_view id) override;
  absl::StatusOr<size_t> PurgeExpiredIdempotencyKeys() override;
  absl::StatusOr<size_t> PurgeDeadLetters(absl::Duration older_than) override;
  absl::Status PurgeDeadLetter(absl::string_view id) override;
  absl::StatusOr<Stats> GetStats() override;
  absl::StatusOr<std::vector<LanePending>> PendingByLane() override;
  absl::Time WallClockMark() const override;
  absl::Time StoreClockNow() const override { return store_clock_.Now(); }
  absl::Status ResetWallClockMark() override;
  absl::StatusOr<WorkflowRecord> GetWorkflow(
      absl::string_view event_id) override;
  absl::StatusOr<std::vector<std::string>> ListWorkflowResults(
      absl::string_view event_id, size_t limit) override;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
  ListWorkflowDefinitions() override;
  absl::StatusOr<bool> HasWorkflowStates() override;
  absl::StatusOr<std::vector<std::string>> PurgeWorkflowDefinitions(
      const std::vector<std::string>& keep) override;
  absl::Status RetryWorkflow(absl::string_view event_id,
                             absl::string_view state) override;
  absl::StatusOr<size_t> PurgeFinishedWorkflows(
      absl::Duration older_than) override;
  absl::StatusOr<VerifyReport> Verify() override;
  void SetWakeup(std::function<void()> wakeup) override;

  // Reads the first `limit` pending entries the naive way, seeking from key
  // zero without bounds; returns how many it found. Benchmarks use it as the
  // baseline that NextDue's head bound is measured against.
  absl::StatusOr<size_t> TEST_ScanFromZero(size_t limit);

  // Writers waiting in the queue, the leader included.
  size_t TEST_QueuedWriters() ABSL_LOCKS_EXCLUDED(mu_);
  // Commits that waited for the writer queue to make room in their class
  // (on_full drop_oldest, MakeClassRoomLocked).
  uint64_t TEST_ClassRoomWaits() ABSL_LOCKS_EXCLUDED(mu_);
  // The background syncer's thread (RequestSync), for a benchmark to count
  // its CPU with the agent's; false if it has not started.
  bool TEST_SyncerThread(std::thread::native_handle_type* handle)
      ABSL_LOCKS_EXCLUDED(sync_mu_);

 private:
  friend absl::StatusOr<std::unique_ptr<Store>> OpenStoreWithEnv(
      const Options&, const std::string&, rocksdb::Env*, bool,
      const StoreTestOptions&);

  StoreImpl(const Options& options, EventClasses classes, std::string path,
            bool read_only, const StoreTestOptions& test);

  // --- Open steps (store_open.cc) ---
  absl::Status OpenDb(rocksdb::Env* env)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  // True if the path holds no store yet and is now ready for a new one;
  // kNotFound if it must not be created.
  absl::StatusOr<bool> PreparePath() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  // Lists the families of an existing database and checks them; true if it
  // is a first open cut off while creating them (finish creating the store).
  absl::StatusOr<bool> ReadFamilies(const rocksdb::DBOptions& db_options,
                                    std::vector<std::string>* families)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  absl::Status OpenRocks(rocksdb::DBOptions db_options,
                         const RocksMemory& memory,
                         const std::vector<std::string>& families)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  void BindHandles() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  absl::Status MakeSecondaryDir();
  absl::Status LoadOrCreateManifest(
      bool fresh, const std::vector<std::string>& existing_families)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  absl::Status LoadQueueState() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);

  // --- Feature sets (store_features.cc, lib/features.h) ---
  // The manifest as stored, read with RocksDB's read-only mode, which writes
  // nothing; nullopt if there is none yet.
  absl::StatusOr<std::optional<storage::StoreManifest>>
  ReadManifestWithoutWriting(const rocksdb::DBOptions& db_options);
  // Before a writable open: refuses (kFailedPrecondition) a store whose
  // features this library must not write, with every file left as it was.
  absl::Status CheckFeaturesBeforeWriting(const rocksdb::DBOptions& db_options);
  // Adds to `manifest` the features the store uses without recording them
  // (written before the feature sets existed); true if it added one.
  absl::StatusOr<bool> AddFeaturesInUseLocked(storage::StoreManifest* manifest)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  // The manifest to write with `batch` if it is the first to use a feature
  // that manifest_ lacks; nullopt otherwise.
  std::optional<storage::StoreManifest> FeaturesFirstUsedLocked(
      const rocksdb::WriteBatch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Scans the pending family once to build index_ and to recount the
  // pending events and bytes (the derived figures win over stored ones).
  absl::Status RebuildIndex() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  // Persists the store clock at close, with an empty synced write, if the
  // store opened whole and the clock moved a minute or more since the last
  // write. Errors: the write's.
  absl::Status PersistStoreClockLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Closes the RocksDB instance (syncing the log unless a write failed).
  absl::Status CloseDbLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a write failed for lack of disk space: close and reopen RocksDB.
  absl::Status ReopenAfterFullDiskLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ProbeFreeSpaceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK if the RocksDB instance is open. REQUIRES: mu_ or db_mu_ (shared).
  absl::Status DbReady() const;

  // --- The write path (store_impl.cc) ---
  // One write waiting in the queue; lives on its thread's stack.
  struct Writer {
    absl::string_view what;  // names the write in errors
    bool sync = false;
    std::function<void()> apply;  // in-memory effects, once durable
    absl::Status status;
    bool done = false;
    absl::CondVar cv;
  };
  // Queues `batch` (everything but the queue state) with `after`, the queue
  // state once it is applied, and returns when it is written (synced when
  // `sync`) or failed. On success `apply` has run, under mu_, in queue order.
  // `what` names the operation in errors. REQUIRES: WritableLocked() was OK
  // when `batch` and `after` were built, against tail_.
  absl::Status WriteLocked(const rocksdb::WriteBatch& batch,
                           const storage::QueueState& after,
                           absl::string_view what, bool sync,
                           std::function<void()> apply = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The leader's part: writes every queued writer as one batch.
  void WriteGroupLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks the first `n` queued writers done with `status` and wakes them.
  void FinishWritersLocked(size_t n, const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK, or why writes are refused (closed, or an earlier failed write).
  absl::Status WritableLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Writes that read and change existing entries (everything but Commit)
  // run one at a time: while one waits in the queue, the entries it read
  // must not change under it. Commits only append, so they pass by freely.
  class SerialWrite {
   public:
    explicit SerialWrite(StoreImpl* store)
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(store->mu_);
    ~SerialWrite() ABSL_EXCLUSIVE_LOCKS_REQUIRED(store_->mu_);
    SerialWrite(const SerialWrite&) = delete;
    SerialWrite& operator=(const SerialWrite&) = delete;

   private:
    StoreImpl* const store_;
  };

  // --- Commit (store_commit.cc) ---
  // A stored idempotency record for the Txn's key either answers the commit
  // (a repeat within the window) or has expired and is replaced.
  struct IdempotencyLookup {
    std::optional<CommitResult> answer;
    std::optional<int64_t> expired_committed_ms;
  };
  // REQUIRES: the Txn's key is held (KeyHold).
  absl::StatusOr<IdempotencyLookup> LookUpIdempotencyKey(const Txn& txn)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Holds an idempotency key (none if empty) for the life of a Commit.
  class KeyHold {
   public:
    KeyHold(StoreImpl* store, const std::string& key)
        ABSL_LOCKS_EXCLUDED(store->mu_);
    ~KeyHold();
    KeyHold(const KeyHold&) = delete;
    KeyHold& operator=(const KeyHold&) = delete;

   private:
    StoreImpl* const store_;
    const std::string& key_;
  };
  // Commit without its timing (commit_latency_).
  absl::StatusOr<CommitResult> CommitUntimed(const Txn& txn);
  // Writes `commit`, built at wall time `built`, and indexes its events.
  absl::Status WriteCommitLocked(CommitBatch* commit, absl::Time built)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- The queue (store_queue.cc, store_settle.cc) ---
  // The index's clock: milliseconds of Clock::Monotonic().
  int64_t IndexNow() const;
  // The index due time of stored next-attempt time `due_ms`, written at wall
  // time `written_ms` (the commit, the attempt, the replay), as of now. If
  // the wall clock has gone back since it was written, `due_ms - now` would
  // be too long by the jump: `clock_back` says what to do instead.
  enum class ClockBack {
    kKeepDelay,  // due `due_ms - written_ms` from now (its own delay)
    kDueNow,     // due at once
  };
  int64_t IndexDue(int64_t due_ms, int64_t written_ms,
                   ClockBack clock_back = ClockBack::kKeepDelay) const;
  // IndexDue with the clocks already read: wall `now_ms`, index `index_now`.
  static int64_t IndexDueAt(int64_t due_ms, int64_t written_ms,
                            ClockBack clock_back, int64_t now_ms,
                            int64_t index_now);
  // Adds pending entry `seq` of lane (destination, type), stored in
  // `bytes`, to the index.
  void IndexEntryLocked(uint64_t seq, absl::string_view ordering_key,
                        absl::string_view destination, absl::string_view type,
                        int64_t due, size_t bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts pending `seq` back in the untargeted lane of its own lane's
  // destination and type (Relane). No-op if it is not indexed.
  void UntargetLocked(uint64_t seq) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Untargets the pending event `event_id`, if Relane targeted it.
  void UntargetIdLocked(const std::string& event_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<SettleResult> SettleLocked(
      const std::vector<Settlement>& settlements, bool sync)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The single-event forms: one settlement, synced per Options::sync;
  // kNotFound if the event is not pending.
  absl::Status SettleOne(Settlement settlement) ABSL_LOCKS_EXCLUDED(mu_);
  // The queue head once `removed` seqs are gone: the smallest indexed seq
  // not among them, else the durable next_seq (every queued, unindexed
  // commit lies at or above it).
  uint64_t HeadWithoutLocked(const absl::flat_hash_set<uint64_t>& removed) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the pending entry of `event` and checks it is that event.
  struct StoredEntry {
    std::string value;  // as stored
    storage::OutboxEntry entry;
  };
  absl::StatusOr<StoredEntry> ReadPendingLocked(const PendingEvent& event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One settlement of SettleLocked into `build`.
  struct SettleBuild;
  // The settlement batch written as StoreVariant::SettlesWithoutLog says,
  // bypassing the queue (StoreTestOptions::mark_delivered_without_wal).
  absl::Status TEST_WriteWithoutWalLocked(SettleBuild* build,
                                          std::function<void()> apply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `kind` is the settlement's, or what its workflow turned it into.
  absl::Status AddSettlementLocked(const Settlement& settlement,
                                   Settlement::Kind kind,
                                   const StoredEntry& stored, absl::Time now,
                                   SettleBuild* build)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AddDeliveredLocked(const Settlement& settlement, uint32_t bytes,
                                  SettleBuild* build)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AddStepDoneLocked(const StoredEntry& stored, absl::Time now,
                                 SettleBuild* build)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- Event classes (store_classes.cc) ---
  // Counts `events` into (sign +1) or out of (-1) class_queued_.
  void QueueClassAddsLocked(const std::vector<CommittedEvent>& events, int sign)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What ClassRoomLocked found.
  struct ClassRoom {
    // The pending events to evict so that the commit fits, oldest first.
    std::vector<uint64_t> victims;
    // Even with every indexed event of a class evicted, the commits still
    // in the writer queue keep it over its limit: wait for them to be
    // written (and evictable), then look again.
    bool wait_for_queue = false;
  };
  // The room `events` need in their classes. Errors: kResourceExhausted for
  // a class with on_full reject, or one the commit alone would overfill.
  absl::StatusOr<ClassRoom> ClassRoomLocked(
      const std::vector<CommittedEvent>& events)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ClassRoomLocked until it needs nothing more than the victims it returns:
  // takes `*serial` (a SerialWrite) before any eviction, and waits for the
  // writers queued ahead when they hold the room. Sets `*waited` if the
  // queue may have moved meanwhile (the commit must be built again).
  absl::StatusOr<std::vector<uint64_t>> MakeClassRoomLocked(
      const std::vector<CommittedEvent>& events,
      std::optional<SerialWrite>* serial, bool* waited)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits until every writer queued now has finished (written or failed).
  void WaitForQueuedWritersLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // How BuryLocked gives events up.
  struct Burial {
    // Else evicted: kept as a dead letter, or only counted when the
    // event's class says keep_evicted false.
    bool expired = false;
    std::string reason(const EventClass* c) const;
  };
  // Takes pending `seqs` out of the queue in one write, as `how` says;
  // skips those no longer pending. REQUIRES: a SerialWrite is held.
  absl::Status BuryLocked(const std::vector<uint64_t>& seqs, Burial how)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pending entry `seq`, or nullopt if it is gone or cannot be decoded
  // (NextDue reports that one).
  absl::StatusOr<std::optional<StoredEntry>> ReadSeqLocked(uint64_t seq)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Appends to `victims` (up to `limit` in all) the oldest pending events
  // of class `cls` created before `cutoff`.
  absl::Status ExpiredOfClassLocked(uint16_t cls, absl::Time cutoff,
                                    size_t limit,
                                    std::vector<uint64_t>* victims)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- Workflows (store_workflow.cc) ---
  // Adds `settlement`'s workflow state and result rows to `batch`. May turn
  // `*kind` from kDelivered into kStepDone (see Settlement::workflow_state).
  absl::Status AddWorkflowWritesLocked(const Settlement& settlement,
                                       const storage::OutboxEntry& stored,
                                       Settlement::Kind* kind,
                                       rocksdb::WriteBatch* batch,
                                       storage::QueueState* next)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds the state of workflow `id` to `batch`, decoded (rows, or a state
  // the store changed): stamped with the store clock's time when it is
  // `finishing`. REQUIRES: a SerialWrite is held.
  absl::Status PutDecodedStateLocked(const std::string& id, bool finishing,
                                     storage::WorkflowState* state,
                                     rocksdb::WriteBatch* batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records the cancels of `txn` in `commit` and queues again the completed
  // workflows they cancel. REQUIRES: a SerialWrite is held.
  absl::Status AddCancelsLocked(const Txn& txn, absl::Time now,
                                CommitBatch* commit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The cancels of `txn`, each by event id: a cancel by idempotency key
  // becomes one per event of that key's commit. Errors: kNotFound for a key
  // not stored.
  absl::StatusOr<std::vector<Txn::CancelOp>> CancelsByIdLocked(const Txn& txn)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether a cancel of `event_id` is stored.
  absl::StatusOr<bool> CancelStoredLocked(absl::string_view event_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Replay and RetryWorkflow: `state` null for Replay, which refuses a
  // workflow's dead letter.
  absl::Status ReplayLocked(absl::string_view event_id,
                            const storage::WorkflowState* state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // RetryWorkflow's part of the replay: `state` replaces `old` (none if
  // nothing was stored), which leaves the retention index.
  absl::Status AddRetriedStateLocked(
      const std::string& event_id,
      const std::optional<storage::WorkflowState>& old,
      const storage::WorkflowState& state, rocksdb::WriteBatch* batch,
      storage::QueueState* next) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The stored state of `event_id`'s workflow; nullopt when none is stored
  // (or the store predates workflows and is open read-only).
  absl::StatusOr<std::optional<storage::WorkflowState>> ReadWorkflowStateLocked(
      absl::string_view event_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A workflow's rows (feature workflow_rows); the answers only when
  // `answers`. nullopt when it has no head row.
  // REQUIRES: mu_ or db_mu_ held (db_ stays).
  struct StoredRows {
    storage::WorkflowHead head;
    std::vector<storage::WorkflowStep> steps;
    std::map<uint32_t, storage::StepAnswer> answers;
  };
  absl::StatusOr<std::optional<StoredRows>> ReadWorkflowRows(
      absl::string_view event_id, bool answers);
  // The workflow of `event_id` as one state: assembled from its rows, or as
  // stored whole under "s"; nullopt when neither is stored.
  // REQUIRES: mu_ or db_mu_ held.
  absl::StatusOr<std::optional<storage::WorkflowState>> ReadAnyWorkflowState(
      absl::string_view event_id);
  // The kept workflow definitions no stored workflow names and `keep` does
  // not list, sorted (PurgeWorkflowDefinitions). Reads under db_mu_ only.
  absl::StatusOr<std::vector<std::string>> UnnamedDefinitions(
      const std::vector<std::string>& keep) ABSL_LOCKS_EXCLUDED(mu_, db_mu_);
  // Adds to `batch` the rows of `state` (WorkflowState::rows) that differ
  // from the stored ones, replacing a state stored whole.
  absl::Status AddWorkflowRowsLocked(const std::string& event_id,
                                     const storage::WorkflowState& state,
                                     rocksdb::WriteBatch* batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds the deletion of everything stored of workflow `event_id` but its
  // retention index entry to `batch`.
  absl::Status AddWorkflowDeletesLocked(const std::string& event_id,
                                        rocksdb::WriteBatch* batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What PurgeFinishedWorkflows deletes, in Unix ms: the retention index is
  // read below `wall_ms` (its keys are wall-clock finish times), and of that
  // a workflow finished before `store_ms` on the store clock goes (one from
  // before that stamp: finished before `earlier_ms`, the earlier clock's).
  struct FinishedCutoff {
    int64_t wall_ms;
    int64_t store_ms;
    int64_t earlier_ms;
    bool Passed(const storage::WorkflowState& state) const;
  };
  // Adds the deletion of up to `max` workflows past `cutoff` to `batch`,
  // reading the index from `*from` ("": its start), and sets `*from` to
  // where the next call goes on ("": the end was reached). Returns how many.
  absl::StatusOr<size_t> AddFinishedPurgeLocked(const FinishedCutoff& cutoff,
                                                size_t max, std::string* from,
                                                rocksdb::WriteBatch* batch,
                                                storage::QueueState* next)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads and decodes pending entries `seqs` (under db_mu_, not mu_) into
  // `due`: decoded ones into events, damaged ones into unreadable, and
  // missing ones too when `missing_is_error` (else they were settled since).
  void ReadEntries(const std::vector<uint64_t>& seqs, bool missing_is_error,
                   DueEvents* due) ABSL_LOCKS_EXCLUDED(mu_);
  // Calls `visit` for each pending entry that decodes, in commit order from
  // the head, until it returns false. Reads only the indexed seqs, so the
  // tombstones between live entries are never walked.
  // `batch`: how many entries to read at a time (the caller's limit).
  absl::Status ScanPending(absl::FunctionRef<bool(PendingEvent)> visit,
                           size_t batch = 64) ABSL_LOCKS_EXCLUDED(mu_, db_mu_);
  absl::StatusOr<DeadLetter> DecodeDeadLetter(absl::string_view key,
                                              absl::string_view value);
  // Whether the idempotency record that index entry `expiry` names (none:
  // a malformed entry) was committed before `store_cutoff_ms` on the store
  // clock, or is gone: PurgeExpiredIdempotencyKeys may forget it.
  absl::StatusOr<bool> KeyExpiredLocked(
      const std::optional<keys::ExpiryKey>& expiry, int64_t store_cutoff_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Dead letters deleted per write by PurgeDeadLetters.
  static constexpr size_t kPurgeBatch = 512;
  // Writes `batch`, `*deleted` dead letters' deletions, counted, and empties
  // both; nothing if there are none. REQUIRES: a SerialWrite is held.
  absl::Status WritePurgeLocked(rocksdb::WriteBatch* batch, size_t* deleted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  rocksdb::ColumnFamilyHandle* TableHandle(absl::string_view table) const;
  absl::Status CheckOpen() const;
  // The size of the files in path_ (Stats::disk_bytes).
  absl::StatusOr<uint64_t> DiskBytes() const;
  absl::Time Now() const { return clock_->Now(); }
  void Wake();

  // The background syncer (store_sync.cc), started by the first
  // RequestSync and stopped by Close.
  void SyncerLoop();
  // Syncs the log once, past every write made when it starts. Sets `broke`
  // if the sync failed for good (the store then refuses writes until it is
  // reopened).
  absl::Status SyncOnce(bool* broke);
  void StopSyncer() ABSL_LOCKS_EXCLUDED(mu_, sync_mu_);
  // A group written with `mark`, synced or not: raises the marks.
  void NoteGroupWrittenLocked(bool synced) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RaiseDurableMark(uint64_t mark);

  const Options options_;
  const EventClasses classes_;  // options_.event_classes, checked
  const std::string path_;
  // Opened as a RocksDB secondary instance: reads only, next to a writer.
  const bool read_only_;
  // The broken variant tests ask for, or the store's own behaviour
  // (store_variant.h): what the write paths ask where a variant differs.
  const std::unique_ptr<const StoreVariant> variant_;
  std::string secondary_dir_;  // the secondary's own scratch directory
  Clock* const clock_;

  // Set during open and replaced only by ReopenAfterFullDiskLocked, which
  // holds mu_ and db_mu_ as a writer, and only while no writer is queued (a
  // leader uses db_ without mu_). Code that holds neither lock (readers
  // such as Get and ListPending) holds db_mu_ as a reader while it uses them.
  // Lock order: mu_, then db_mu_.
  mutable absl::Mutex db_mu_ ABSL_ACQUIRED_AFTER(mu_);
  rocksdb::Env* env_ = nullptr;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // owned; all families
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* pending_ = nullptr;
  rocksdb::ColumnFamilyHandle* dead_ = nullptr;
  rocksdb::ColumnFamilyHandle* idem_ = nullptr;
  // Null only in a read-only open of a store written before workflows
  // existed (it has no such family, and a reader cannot create it).
  rocksdb::ColumnFamilyHandle* workflows_ = nullptr;
  absl::flat_hash_map<std::string, rocksdb::ColumnFamilyHandle*> tables_;
  std::atomic<bool> closed_{false};
  // QueueState::wall_clock_mark_unix_ms: raised by every group write (which
  // persists it), read without mu_ by WallClockMark.
  std::atomic<int64_t> clock_mark_ms_{0};
  // The time deletions by age are measured on (lib/store_clock.h): started
  // at open from QueueState::store_clock_ms, persisted by every group write.
  StoreClock store_clock_{clock_};
  // What the last group write persisted of it (or the open found).
  int64_t store_clock_persisted_ms_ ABSL_GUARDED_BY(mu_) = 0;
  // Set once Open finished: only then may Close write.
  bool opened_ ABSL_GUARDED_BY(mu_) = false;

  mutable absl::Mutex mu_;
  // The store's manifest as of the last durable write (its feature sets).
  storage::StoreManifest manifest_ ABSL_GUARDED_BY(mu_);
  // The queue state as of the last durable write, and after every queued
  // writer (what the next writer builds on).
  storage::QueueState state_ ABSL_GUARDED_BY(mu_);
  storage::QueueState tail_ ABSL_GUARDED_BY(mu_);
  QueueIndex index_ ABSL_GUARDED_BY(mu_);  // as of the last durable write
  // Per event class, the events of commits in the writer queue, not yet in
  // index_: the class limits count them as pending.
  struct ClassCount {
    uint64_t count = 0;
    uint64_t bytes = 0;
  };
  absl::flat_hash_map<uint16_t, ClassCount> class_queued_ ABSL_GUARDED_BY(mu_);
  // The events Relane put in a targeted lane, by a 64-bit hash of their id
  // (TargetedKey), for a cancel (which names an id) to put back: 16 bytes
  // an event, not a copy of its id, since a day's backlog may wait for one
  // destination. Two ids with one hash (a chance of about 3 in 10^8 among
  // 10^6 waiting events) cost at most a cancel that waits for its
  // destination, as before lanes per target, or an event planned once
  // more. May hold
  // events since untargeted or gone: swept when it doubles
  // (targeted_sweep_at_), so it stays within twice the targeted events.
  static uint64_t TargetedKey(absl::string_view event_id);
  absl::flat_hash_map<uint64_t, uint64_t> targeted_ ABSL_GUARDED_BY(mu_);
  size_t targeted_sweep_at_ ABSL_GUARDED_BY(mu_) = 1024;
  std::deque<Writer*> writers_ ABSL_GUARDED_BY(mu_);
  // Writers ever queued and ever finished (WaitForQueuedWritersLocked).
  uint64_t writers_queued_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t writers_finished_ ABSL_GUARDED_BY(mu_) = 0;
  absl::CondVar writers_done_cv_;
  uint64_t class_room_waits_ ABSL_GUARDED_BY(mu_) = 0;
  BatchGroup group_ ABSL_GUARDED_BY(mu_);  // batches of every queued writer
  int serial_writes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::CondVar serial_cv_;
  // Idempotency keys of commits under way (KeyHold): a repeat waits for the
  // first.
  absl::flat_hash_set<std::string> keys_in_flight_ ABSL_GUARDED_BY(mu_);
  absl::CondVar keys_cv_;
  // Set when a write failed in a way that leaves its outcome unknown: the
  // batch may or may not reappear after a reopen. Like LevelDB's bg_error_,
  // every later write is refused until the store is reopened, because a
  // write acknowledged after such a failure could be lost with it.
  absl::Status write_error_ ABSL_GUARDED_BY(mu_);

  // Every Commit that returned OK. Lock-free, so timing a commit adds no
  // contention between committers.
  LatencyHistogram commit_latency_{CommitLatencyBuckets()};

  absl::Mutex wakeup_mu_;
  std::function<void()> wakeup_ ABSL_GUARDED_BY(wakeup_mu_);

  // Write marks: every group written raises written_mark_; a synced group,
  // or the syncer once the log is synced past it, raises durable_mark_.
  uint64_t written_mark_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<uint64_t> durable_mark_{0};
  // Cancels written (CancelCount), raised under mu_ by the cancel's commit
  // once it is readable, inside its SerialWrite: a Settle, serial too, that
  // finds a cancel stored is always ordered after the count rose.
  std::atomic<uint64_t> cancel_count_{0};
  // The syncer's requests. Lock order: sync_mu_ is never held while taking
  // mu_ or db_mu_, nor they while taking it.
  absl::Mutex sync_mu_;
  absl::CondVar sync_cv_;
  uint64_t sync_requested_ ABSL_GUARDED_BY(sync_mu_) = 0;
  bool sync_stop_ ABSL_GUARDED_BY(sync_mu_) = false;
  absl::Status sync_error_ ABSL_GUARDED_BY(sync_mu_);
  std::thread syncer_;  // started and joined under sync_mu_ / by StopSyncer
};

}  // namespace outbox

#endif  // OUTBOX_LIB_STORE_IMPL_H_
