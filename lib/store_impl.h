// Copyright (c) edge-outbox authors.
//
// StoreImpl: the RocksDB-backed Store. Internal; callers use outbox/store.h.

#ifndef OUTBOX_LIB_STORE_IMPL_H_
#define OUTBOX_LIB_STORE_IMPL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/queue_index.h"
#include "outbox/store.h"
#include "proto/storage.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/write_batch.h"

namespace outbox {

// a - b, or 0 where that would wrap: the queue counters never go below
// zero (a wrapped count would make the queue look full forever).
inline uint64_t SaturatingSub(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}

// Deliberately broken variants of the store, so that crash suites can prove
// they catch what they claim to. Never set outside tests.
struct StoreTestOptions {
  // Commits return before the log is fsync'ed, whatever Options::sync says.
  bool skip_commit_sync = false;
  // A commit writes the caller's records and the outbox entries in two
  // separate batches (crash point kCommitBetweenSplitBatches between them).
  bool split_commit_batches = false;
  // MarkDelivered writes without the WAL (WriteOptions::disableWAL): it
  // returns OK, but only a memtable flush makes it durable, so a power cut
  // brings the event back although its acknowledgement "was synced".
  bool mark_delivered_without_wal = false;
  // MarkDelivered counts an event whose seq is a multiple of 16 twice in
  // delivered_total.
  bool miscount_delivered_total = false;
  // RecordAttempt writes a pending_count one too high.
  bool miscount_pending = false;
  // MarkDelivered of the last pending event persists a head past next_seq
  // (the next write heals it), which an open refuses as inconsistent.
  bool head_past_next_when_emptied = false;
};

// Opens a store whose files are reached through `env` (borrowed; must
// outlive the store). Tests pass an Env over a fault-injecting FileSystem.
absl::StatusOr<std::unique_ptr<Store>> OpenStoreWithEnv(
    const Options& options, const std::string& path, rocksdb::Env* env,
    bool read_only = false, const StoreTestOptions& test = StoreTestOptions());

// Thread-safety: as Store. All writes hold mu_ from building the batch to
// installing the new QueueState, so that the counters written with a batch
// are exactly the in-memory counters plus that batch's effect.
class StoreImpl final : public Store {
 public:
  ~StoreImpl() override;

  absl::Status Close() override;
  absl::StatusOr<CommitResult> Commit(const Txn& txn) override;
  absl::StatusOr<std::string> Get(absl::string_view table,
                                  absl::string_view key) override;
  absl::StatusOr<DueEvents> NextDue(
      size_t limit,
      absl::FunctionRef<bool(const PendingEvent&)> eligible) override;
  absl::Status RecordAttempt(const PendingEvent& event,
                             const AttemptRecord& attempt) override;
  absl::Status MarkDelivered(const PendingEvent& event) override;
  absl::Status MoveToDeadLetters(const PendingEvent& event,
                                 absl::string_view reason) override;
  absl::Status Quarantine(uint64_t seq) override;
  absl::Status Replay(absl::string_view event_id) override;
  absl::StatusOr<std::vector<PendingEvent>> ListPending(size_t limit) override;
  absl::StatusOr<std::vector<DeadLetter>> ListDeadLetters(
      size_t limit) override;
  absl::StatusOr<DeadLetter> FindDeadLetter(absl::string_view id) override;
  absl::StatusOr<PendingEvent> FindPending(absl::string_view id) override;
  absl::StatusOr<size_t> PurgeExpiredIdempotencyKeys() override;
  absl::StatusOr<size_t> PurgeDeadLetters(absl::Time cutoff) override;
  absl::StatusOr<Stats> GetStats() override;
  void SetWakeup(std::function<void()> wakeup) override;

  // Reads the first `limit` pending entries the naive way, seeking from key
  // zero without bounds; returns how many it found. Benchmarks use it as the
  // baseline that NextDue's head bound is measured against.
  absl::StatusOr<size_t> TEST_ScanFromZero(size_t limit);

 private:
  friend absl::StatusOr<std::unique_ptr<Store>> OpenStoreWithEnv(
      const Options&, const std::string&, rocksdb::Env*, bool,
      const StoreTestOptions&);

  StoreImpl(const Options& options, std::string path, bool read_only,
            const StoreTestOptions& test);

  // Open steps (store_open.cc).
  absl::Status OpenDb(rocksdb::Env* env)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  absl::Status MakeSecondaryDir();
  absl::Status LoadOrCreateManifest(
      bool fresh, const std::vector<std::string>& existing_families)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  absl::Status LoadQueueState() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  // Scans the pending family once to build index_ and to recount the
  // pending events and bytes (the derived figures win over stored ones).
  absl::Status RebuildIndex() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, db_mu_);
  // Closes the RocksDB instance (syncing the log unless a write failed).
  absl::Status CloseDbLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a write failed for lack of disk space: close and reopen RocksDB.
  absl::Status ReopenAfterFullDiskLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ProbeFreeSpaceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK if the RocksDB instance is open. REQUIRES: mu_ or db_mu_ (shared).
  absl::Status DbReady() const;

  // Writes `batch` plus `next` (the queue state after the batch) and, on
  // success, makes `next` the in-memory state. `what` names the operation in
  // errors.
  absl::Status WriteLocked(rocksdb::WriteBatch* batch,
                           const storage::QueueState& next,
                           absl::string_view what, bool sync)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteLocked(rocksdb::WriteBatch* batch,
                           const storage::QueueState& next,
                           absl::string_view what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return WriteLocked(batch, next, what, options_.sync);
  }
  // MarkDelivered's WriteLocked, broken as StoreTestOptions says.
  absl::Status TEST_WriteDeliveredLocked(rocksdb::WriteBatch* batch,
                                         const storage::QueueState& next)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK, or why writes are refused (closed, or an earlier failed write).
  absl::Status WritableLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The smallest pending seq greater than `seq`, or next_seq if none.
  absl::StatusOr<uint64_t> HeadAfterLocked(uint64_t seq)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the pending entry of `event` and checks it is that event.
  struct StoredEntry {
    std::string value;  // as stored
    storage::OutboxEntry entry;
  };
  absl::StatusOr<StoredEntry> ReadPendingLocked(const PendingEvent& event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes pending entry `seq` (raw size `bytes`) and puts `dead` in the
  // dead letters under `dead_key`.
  absl::Status BuryLocked(uint64_t seq, size_t bytes,
                          const std::string& dead_key,
                          const storage::DeadLetter& dead,
                          absl::string_view what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Calls `visit` for each pending entry that decodes, in commit order from
  // the head, until it returns false. Takes its own snapshot of the bounds.
  absl::Status ScanPending(absl::FunctionRef<bool(PendingEvent)> visit)
      ABSL_LOCKS_EXCLUDED(mu_, db_mu_);
  absl::StatusOr<DeadLetter> DecodeDeadLetter(absl::string_view key,
                                              absl::string_view value);
  rocksdb::ColumnFamilyHandle* TableHandle(absl::string_view table) const;
  absl::Status CheckOpen() const;
  absl::Time Now() const { return clock_->Now(); }
  void Wake();

  const Options options_;
  const std::string path_;
  // Opened as a RocksDB secondary instance: reads only, next to a writer.
  const bool read_only_;
  const StoreTestOptions test_;
  std::string secondary_dir_;  // the secondary's own scratch directory
  Clock* const clock_;

  // Set during open and replaced only by ReopenAfterFullDiskLocked, which
  // holds mu_ and db_mu_ as a writer. Code that holds neither lock (readers
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
  absl::flat_hash_map<std::string, rocksdb::ColumnFamilyHandle*> tables_;
  std::atomic<bool> closed_{false};

  absl::Mutex mu_;
  storage::QueueState state_ ABSL_GUARDED_BY(mu_);
  QueueIndex index_ ABSL_GUARDED_BY(mu_);
  // Set when a write failed in a way that leaves its outcome unknown: the
  // batch may or may not reappear after a reopen. Like LevelDB's bg_error_,
  // every later write is refused until the store is reopened, because a
  // write acknowledged after such a failure could be lost with it.
  absl::Status write_error_ ABSL_GUARDED_BY(mu_);

  absl::Mutex wakeup_mu_;
  std::function<void()> wakeup_ ABSL_GUARDED_BY(wakeup_mu_);
};

}  // namespace outbox

#endif  // OUTBOX_LIB_STORE_IMPL_H_
