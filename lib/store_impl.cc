// Copyright (c) edge-outbox authors.
//
// StoreImpl: lifetime, the shared write path, and Commit.

#include "lib/store_impl.h"

#include <filesystem>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/codec.h"
#include "lib/crash_points.h"
#include "lib/keys.h"
#include "lib/rocks_status.h"
#include "lib/slices.h"
#include "lib/status_macros.h"

namespace outbox {
namespace {

constexpr size_t kMaxIdempotencyKeyBytes = 512;

absl::Status ValidateEvent(size_t index, const Txn::EmittedEvent& e) {
  if (e.event.type.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("event #", index, " (id ", e.id, ") has no type"));
  }
  if (e.id.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("event #", index, " has no id (use Txn::Emit)"));
  }
  return absl::OkStatus();
}

}  // namespace

StoreImpl::StoreImpl(const Options& options, std::string path, bool read_only,
                     const StoreTestOptions& test)
    : options_(options),
      path_(std::move(path)),
      read_only_(read_only),
      test_(test),
      clock_(options.clock != nullptr ? options.clock : SystemClock()) {}

StoreImpl::~StoreImpl() { Close().IgnoreError(); }

absl::Status StoreImpl::Close() {
  absl::MutexLock l(&mu_);
  if (closed_.exchange(true) || db_ == nullptr) return absl::OkStatus();
  // (db_ is null only if a reopen after a full disk failed: nothing to do.)
  absl::Status status = CloseDbLocked();
  if (!secondary_dir_.empty()) {
    std::error_code ignored;  // scratch space only; nothing of the store
    std::filesystem::remove_all(secondary_dir_, ignored);
  }
  return status;
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
  index_ = QueueIndex();
  absl::Status opened;
  {
    absl::WriterMutexLock w(&db_mu_);
    opened = OpenDb(env_);
  }
  // If this fails too, leave nothing half-open: readers get DbReady()'s
  // error and the next write tries again.
  if (!opened.ok() && db_ != nullptr) CloseDbLocked().IgnoreError();
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
    // The disk was full. Try again now: space may have come back.
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

absl::Status StoreImpl::WriteLocked(rocksdb::WriteBatch* batch,
                                    const storage::QueueState& next,
                                    absl::string_view what, bool sync) {
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  // The counters travel in the same batch as the change they count, so after
  // any crash they match the entries exactly.
  rocksdb::Status s = batch->Put(meta_, keys::kQueueStateKey, Encode(next));
  if (!s.ok()) return FromRocks(s, what);
  rocksdb::WriteOptions wo;
  wo.sync = sync;
  s = db_->Write(wo, batch);
  if (!s.ok()) {
    absl::Status status = FromRocks(s, what);
    // After a failed log write or fsync the record may or may not be in the
    // log, and RocksDB stops accepting writes (a background error). A write
    // acknowledged after that could be lost with the uncertain one, so the
    // store refuses writes until it is reopened and recovery has settled
    // what the log holds.
    write_error_ = status;
    return status;
  }
  state_ = next;
  return absl::OkStatus();
}

absl::StatusOr<CommitResult> StoreImpl::Commit(const Txn& txn) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  if (txn.empty()) {
    return absl::InvalidArgumentError("nothing to commit: the Txn is empty");
  }
  if (txn.idempotency_key().size() > kMaxIdempotencyKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("idempotency key is ", txn.idempotency_key().size(),
                     " bytes; the limit is ", kMaxIdempotencyKeyBytes));
  }
  absl::MutexLock l(&mu_);
  // First: a store recovering from a full disk reopens here, which replaces
  // the column family handles the batch is built with.
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  rocksdb::WriteBatch batch;
  // The broken split variant puts the records in a batch of their own.
  rocksdb::WriteBatch split_records;
  rocksdb::WriteBatch& records =
      test_.split_commit_batches ? split_records : batch;
  for (const Txn::RecordOp& op : txn.records()) {
    rocksdb::ColumnFamilyHandle* h = TableHandle(op.table);
    if (h == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown table '", op.table, "' (not in Options::tables)"));
    }
    if (op.key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("empty key in table '", op.table, "'"));
    }
    rocksdb::Status s = op.kind == Txn::OpKind::kPut
                            ? records.Put(h, op.key, op.value)
                            : records.Delete(h, op.key);
    if (!s.ok()) return FromRocks(s, "building the commit");
  }
  for (size_t i = 0; i < txn.events().size(); ++i) {
    OUTBOX_RETURN_IF_ERROR(ValidateEvent(i, txn.events()[i]));
  }

  CommitResult result;
  {
    const absl::Time now = Now();
    const int64_t now_ms = ToStoredMillis(now);

    if (!txn.idempotency_key().empty()) {
      const std::string record_key =
          keys::IdempotencyRecordKey(txn.idempotency_key());
      std::string value;
      rocksdb::Status s =
          db_->Get(rocksdb::ReadOptions(), idem_, record_key, &value);
      if (s.ok()) {
        storage::IdempotencyRecord record;
        OUTBOX_RETURN_IF_ERROR(DecodeStored(
            keys::kIdempotencyFamily, "an idempotency key", value, &record));
        const absl::Time committed =
            FromStoredMillis(record.committed_unix_ms());
        if (now - committed < options_.idempotency_window) {
          result.duplicate = true;
          result.event_ids.assign(record.event_ids().begin(),
                                  record.event_ids().end());
          result.response = record.response();
          return result;
        }
        // Expired: this commit replaces it; drop its expiry index entry.
        s = batch.Delete(idem_,
                         keys::IdempotencyExpiryKey(record.committed_unix_ms(),
                                                    txn.idempotency_key()));
        if (!s.ok()) return FromRocks(s, "building the commit");
      } else if (!s.IsNotFound()) {
        return FromRocks(s, "reading the idempotency key");
      }
      storage::IdempotencyRecord record;
      for (const Txn::EmittedEvent& e : txn.events()) {
        record.add_event_ids(e.id);
      }
      record.set_response(txn.response());
      record.set_committed_unix_ms(now_ms);
      s = batch.Put(idem_, record_key, Encode(record));
      if (s.ok()) {
        s = batch.Put(idem_,
                      keys::IdempotencyExpiryKey(now_ms, txn.idempotency_key()),
                      "");
      }
      if (!s.ok()) return FromRocks(s, "building the commit");
    }

    storage::QueueState next = state_;
    std::vector<std::tuple<uint64_t, absl::string_view, int64_t>> indexed;
    for (const Txn::EmittedEvent& e : txn.events()) {
      storage::OutboxEntry entry;
      entry.set_seq(next.next_seq());
      entry.set_event_id(e.id);
      entry.set_type(e.event.type);
      entry.set_ordering_key(e.event.ordering_key);
      entry.set_payload(e.event.payload);
      entry.set_content_type(e.event.content_type);
      entry.set_destination(e.event.destination);
      entry.set_created_unix_ms(now_ms);
      entry.set_next_attempt_unix_ms(
          ToStoredMillis(std::max(now, e.event.deliver_after)));
      entry.set_state(storage::ENTRY_STATE_PENDING);
      entry.set_idempotency_key(txn.idempotency_key());
      const std::string value = Encode(entry);
      rocksdb::Status s = batch.Put(pending_, keys::Seq(entry.seq()), value);
      if (!s.ok()) return FromRocks(s, "building the commit");
      next.set_next_seq(next.next_seq() + 1);
      next.set_pending_count(next.pending_count() + 1);
      next.set_pending_bytes(next.pending_bytes() + value.size());
      result.event_ids.push_back(e.id);
      indexed.push_back(
          {entry.seq(), e.event.ordering_key, entry.next_attempt_unix_ms()});
    }
    if (next.pending_count() > options_.max_pending_events) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "outbox is full: ", state_.pending_count(), " events pending, ",
          txn.events().size(), " more would pass Options::max_pending_events (",
          options_.max_pending_events, "); nothing was written"));
    }
    if (next.pending_bytes() > options_.max_pending_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("outbox is full: ", state_.pending_bytes(),
                       " bytes pending, this "
                       "commit would pass Options::max_pending_bytes (",
                       options_.max_pending_bytes, "); nothing was written"));
    }
    const bool sync = options_.sync && !test_.skip_commit_sync;
    internal::CrashPoint(internal::kCommitBeforeWrite);
    if (test_.split_commit_batches && split_records.Count() > 0) {
      OUTBOX_RETURN_IF_ERROR(
          WriteLocked(&split_records, state_, "commit (records)", sync));
      internal::CrashPoint(internal::kCommitBetweenSplitBatches);
    }
    OUTBOX_RETURN_IF_ERROR(WriteLocked(&batch, next, "commit", sync));
    internal::CrashPoint(internal::kCommitAfterWrite);
    for (const auto& [seq, key, due_ms] : indexed) index_.Add(seq, key, due_ms);
    result.response = txn.response();
  }
  if (!txn.events().empty()) Wake();
  return result;
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
