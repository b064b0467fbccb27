// Copyright (c) edge-outbox authors.
//
// StoreImpl: lifetime, the shared write path, and reads of records.

#include "lib/store_impl.h"

#include <algorithm>
#include <filesystem>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/codec.h"
#include "lib/crash_points.h"
#include "lib/keys.h"
#include "lib/rocks_status.h"
#include "lib/slices.h"

namespace outbox {
StoreImpl::StoreImpl(const Options& options, EventClasses classes,
                     std::string path, bool read_only,
                     const StoreTestOptions& test)
    : options_(options),
      classes_(std::move(classes)),
      path_(std::move(path)),
      read_only_(read_only),
      variant_(MakeStoreVariant(test)),
      clock_(options.clock != nullptr ? options.clock : SystemClock()),
      index_(&classes_) {}

StoreImpl::~StoreImpl() { Close().IgnoreError(); }

absl::Status StoreImpl::Close() {
  StopSyncer();  // before mu_: a sync under way may need it
  absl::MutexLock l(&mu_);
  if (closed_.load() || db_ == nullptr) {
    closed_.store(true);
    return absl::OkStatus();
  }
  // (db_ is null only if a reopen after a full disk failed: nothing to do.)
  const absl::Status persisted = PersistStoreClockLocked();
  closed_.store(true);
  absl::Status status = CloseDbLocked();
  // A failed close write leaves the log unsynced (CloseDbLocked must not
  // touch it then): the caller hears of it, as of a failed sync.
  if (status.ok()) status = persisted;
  if (!secondary_dir_.empty()) {
    std::error_code ignored;  // scratch space only; nothing of the store
    std::filesystem::remove_all(secondary_dir_, ignored);
  }
  return status;
}

absl::Status StoreImpl::PersistStoreClockLocked() {
  // The store clock counts the time the store is open, and a reopen goes on
  // from the last write: one empty synced write (the queue state carries
  // the clock) keeps the time since then, so that a till restarted often
  // still ages what it deletes by age. Synced, it also syncs every earlier
  // write, as the log sync below would. Not after a failed write (the log
  // must not be touched), nor read-only, nor for less than a minute: each
  // such write leaves a table file at the flush below, and a tool that
  // opens and closes the store in a loop would pile them up for nothing.
  // Only a store that finished opening: one refused halfway is left as it
  // was found.
  if (!opened_ || read_only_ || !write_error_.ok()) return absl::OkStatus();
  constexpr int64_t kWorthAWriteMs = 60 * 1000;
  if (store_clock_.NowMs() - store_clock_persisted_ms_ < kWorthAWriteMs) {
    return absl::OkStatus();
  }
  return WriteLocked(rocksdb::WriteBatch(), tail_, "closing the store",
                     /*sync=*/true);
}

absl::Status StoreImpl::CloseDbLocked() {
  absl::WriterMutexLock w(&db_mu_);
  // With Options::sync every acknowledged write is already on disk; without
  // it this is where the tail of the log becomes durable. After a failed
  // write the log's writer is in an error state and must not be touched:
  // recovery at the next open settles what the log holds.
  absl::Status status =
      read_only_ || !write_error_.ok()
          ? absl::OkStatus()
          : FromRocks(db_->SyncWAL(), "syncing the log on close");
  if (status.ok() && !read_only_ && write_error_.ok()) {
    // Flushing the memtables on a clean close leaves the next open nothing
    // to replay from the log: after a day of deliveries that is hundreds of
    // thousands of entries (puts and the deletes that cancel them). Only
    // speed depends on it; the log above already made everything durable.
    rocksdb::FlushOptions flush;
    flush.allow_write_stall = true;
    db_->Flush(flush, handles_).PermitUncheckedError();
  }
  for (rocksdb::ColumnFamilyHandle* h : handles_) {
    absl::Status s = FromRocks(db_->DestroyColumnFamilyHandle(h), "closing");
    if (status.ok()) status = s;
  }
  handles_.clear();
  tables_.clear();
  meta_ = pending_ = dead_ = idem_ = nullptr;
  absl::Status s = FromRocks(db_->Close(), "closing the store");
  if (status.ok()) status = s;
  db_.reset();
  return status;
}

absl::Status StoreImpl::ProbeFreeSpaceLocked() {
  // Reopening needs room for a new log and manifest. Closing first and then
  // finding no room would leave nothing open to read from, so make sure a
  // modest file can be written and synced before letting go of the old DB.
  const std::string probe = path_ + "/outbox-space-probe.tmp";
  std::unique_ptr<rocksdb::WritableFile> file;
  rocksdb::Status s =
      env_->NewWritableFile(probe, &file, rocksdb::EnvOptions());
  if (s.ok()) {
    const std::string block(64 << 10, '\0');
    for (int i = 0; i < 4 && s.ok(); ++i) s = file->Append(block);
    if (s.ok()) s = file->Sync();
    rocksdb::Status closed = file->Close();
    if (s.ok()) s = closed;
  }
  env_->DeleteFile(probe).PermitUncheckedError();
  return FromRocks(s, "probing for free disk space");
}

absl::Status StoreImpl::ReopenAfterFullDiskLocked() {
  // RocksDB stops writing after a failed log write, and Debian's build
  // asserts if it is made to write again after its own recovery. Closing
  // and reopening is the robust way back: recovery drops the torn tail of
  // the log (the failed write, which never returned OK) and starts a new
  // log, and the queue state and index are rebuilt from what is stored.
  OUTBOX_RETURN_IF_ERROR(ProbeFreeSpaceLocked());
  if (db_ != nullptr) {
    CloseDbLocked().IgnoreError();  // the failed write already said why
  }
  index_ = QueueIndex(&classes_);
  absl::Status opened;
  {
    absl::WriterMutexLock w(&db_mu_);
    opened = OpenDb(env_);
  }
  // If this fails too, leave nothing half-open: readers get DbReady()'s
  // error and the next write tries again.
  if (!opened.ok() && db_ != nullptr) CloseDbLocked().IgnoreError();
  // Recovery flushed what the old log held into synced tables: every write
  // that returned before is durable now (a RequestSync dropped while the
  // store refused writes waits for nothing more).
  if (opened.ok()) RaiseDurableMark(written_mark_);
  return opened;
}

absl::Status StoreImpl::DbReady() const {
  if (db_ == nullptr) {
    return absl::ResourceExhaustedError(
        "the store could not be reopened after the disk filled up; free "
        "space: the next write tries again");
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::CheckOpen() const {
  if (closed_.load()) {
    return absl::FailedPreconditionError("the store is closed");
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::WritableLocked() {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  if (read_only_) {
    return absl::FailedPreconditionError(
        "the store was opened read-only (Store::OpenReadOnly)");
  }
  if (absl::IsResourceExhausted(write_error_)) {
    // The disk was full. Try again now: space may have come back. (A failed
    // write empties the queue, so no leader is using db_.)
    absl::Status reopened = ReopenAfterFullDiskLocked();
    if (!reopened.ok()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the disk is still full (", reopened.message(),
                       "); free space and retry"));
    }
    write_error_ = absl::OkStatus();
  }
  if (!write_error_.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the store refuses writes since an earlier write failed (",
        write_error_.message(), "); close and reopen it to recover"));
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::WriteLocked(const rocksdb::WriteBatch& batch,
                                    const storage::QueueState& after,
                                    absl::string_view what, bool sync,
                                    std::function<void()> apply) {
  Writer w;
  w.what = what;
  w.sync = sync;
  w.apply = std::move(apply);
  group_.Add(batch);
  tail_ = after;
  writers_.push_back(&w);
  ++writers_queued_;
  while (!w.done && &w != writers_.front()) w.cv.Wait(&mu_);
  if (!w.done) WriteGroupLocked();
  return w.status;
}

void StoreImpl::WriteGroupLocked() {
  // Every queued writer has its batch in group_; take them all. Writers that
  // queue while this one writes go into the next group.
  const size_t n = writers_.size();
  const storage::QueueState written = tail_;
  bool sync = false;
  for (size_t i = 0; i < n; ++i) sync = sync || writers_[i]->sync;
  rocksdb::WriteBatch batch = group_.Take();
  // The counters travel in the same batch as the change they count, so after
  // any crash they match the entries exactly.
  storage::QueueState persisted = variant_->Persisted(written);
  // The clock mark is only ever raised here: a clock set back leaves it.
  const int64_t mark = std::max(clock_mark_ms_.load(), ToStoredMillis(Now()));
  clock_mark_ms_.store(mark);
  persisted.set_wall_clock_mark_unix_ms(mark);
  // The store clock too, so that a reopen goes on from here: never below a
  // time any write of this group stamped (they read it before queueing).
  store_clock_persisted_ms_ = store_clock_.NowMs();
  persisted.set_store_clock_ms(store_clock_persisted_ms_);
  rocksdb::Status s = batch.Put(meta_, keys::kQueueStateKey, Encode(persisted));
  // A feature is recorded by the batch that first uses it, never earlier (a
  // store that never used it stays readable by builds without it).
  std::optional<storage::StoreManifest> manifest =
      FeaturesFirstUsedLocked(batch);
  if (s.ok() && manifest.has_value()) {
    s = batch.Put(meta_, keys::kManifestKey, Encode(*manifest));
  }
  size_t group = n;  // writers of this group still queued
  if (variant_->AcksBeforeWrite(n)) {
    // The broken variant: the followers hear OK before their data is synced.
    Writer* leader = writers_.front();
    writers_.pop_front();
    FinishWritersLocked(n - 1, absl::OkStatus());
    writers_.push_front(leader);
    group = 1;
  }
  if (s.ok()) {
    // db_ cannot be replaced while a writer is queued (WritableLocked), so
    // it is safe to use without mu_, which the other writers need to queue.
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    mu_.Unlock();
    internal::CrashPoint(internal::kGroupBeforeWrite);
    s = db_->Write(wo, &batch);
    mu_.Lock();
  }
  if (s.ok()) {
    state_ = written;
    NoteGroupWrittenLocked(sync);
    if (manifest.has_value()) manifest_ = *std::move(manifest);
    FinishWritersLocked(group, absl::OkStatus());
    return;
  }
  // After a failed log write or fsync the group may or may not be in the
  // log, and RocksDB stops accepting writes (a background error). A write
  // acknowledged after that could be lost with the uncertain one, so the
  // store refuses writes until it is reopened and recovery has settled what
  // the log holds. The writers queued behind the group built on its effects:
  // they fail too, with nothing of theirs written.
  const absl::Status status = FromRocks(s, "writing to the store");
  write_error_ = status;
  FinishWritersLocked(writers_.size(), status);
  group_.Clear();
  tail_ = state_;
}

size_t StoreImpl::TEST_QueuedWriters() {
  absl::MutexLock l(&mu_);
  return writers_.size();
}

uint64_t StoreImpl::TEST_ClassRoomWaits() {
  absl::MutexLock l(&mu_);
  return class_room_waits_;
}

void StoreImpl::FinishWritersLocked(size_t n, const absl::Status& status) {
  for (size_t i = 0; i < n; ++i) {
    Writer* w = writers_.front();
    writers_.pop_front();
    if (status.ok() && w->apply) w->apply();
    w->status =
        status.ok()
            ? status
            : absl::Status(status.code(),
                           absl::StrCat(w->what, ": ", status.message()));
    w->done = true;
    w->cv.Signal();
  }
  writers_finished_ += n;
  if (n > 0) writers_done_cv_.SignalAll();
  if (!writers_.empty()) {
    writers_.front()->cv.Signal();  // the next leader
  } else {
    serial_cv_.SignalAll();  // TEST_WriteWithoutWalLocked waits for this
  }
}

StoreImpl::SerialWrite::SerialWrite(StoreImpl* store) : store_(store) {
  while (store_->serial_writes_ > 0) store_->serial_cv_.Wait(&store_->mu_);
  ++store_->serial_writes_;
}

StoreImpl::SerialWrite::~SerialWrite() {
  --store_->serial_writes_;
  store_->serial_cv_.Signal();
}

absl::Time StoreImpl::WallClockMark() const {
  const int64_t ms = clock_mark_ms_.load();
  return ms > 0 ? absl::FromUnixMillis(ms) : absl::InfinitePast();
}

absl::Status StoreImpl::ResetWallClockMark() {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::MutexLock l(&mu_);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  SerialWrite serial(this);
  // The group write persists max(this, the clock): the clock's time now.
  clock_mark_ms_.store(0);
  return WriteLocked(rocksdb::WriteBatch(), tail_, "resetting the clock mark",
                     /*sync=*/true);
}

absl::StatusOr<std::string> StoreImpl::Get(absl::string_view table,
                                           absl::string_view key) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  rocksdb::ColumnFamilyHandle* h = TableHandle(table);
  if (h == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown table '", table, "' (not in Options::tables)"));
  }
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), h, ToSlice(key), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(
        absl::StrCat("no such key in table '", table, "'"));
  }
  if (!s.ok()) return FromRocks(s, absl::StrCat("reading table '", table, "'"));
  return value;
}

rocksdb::ColumnFamilyHandle* StoreImpl::TableHandle(
    absl::string_view table) const {
  auto it = tables_.find(table);
  return it == tables_.end() ? nullptr : it->second;
}

void StoreImpl::SetWakeup(std::function<void()> wakeup) {
  absl::MutexLock l(&wakeup_mu_);
  wakeup_ = std::move(wakeup);
}

void StoreImpl::Wake() {
  absl::MutexLock l(&wakeup_mu_);
  if (wakeup_) wakeup_();
}

}  // namespace outbox
