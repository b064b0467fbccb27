// Copyright (c) edge-outbox authors.
//
// StoreImpl: making writes durable. Sync() waits for one fsync of the log;
// RequestSync() asks a background thread for one and returns at once, so
// that the agent's one thread goes on sending while the log is synced (a
// workflow's next step waits for its predecessor's result to be durable,
// nothing else does). Write marks say which writes a sync covered.
// Writers queued while the syncer's write syncs wait for it, as behind any
// synced Commit: RocksDB writes one group at a time.

#include <algorithm>
#include <utility>

#include "base/status_macros.h"
#include "lib/store_impl.h"

namespace outbox {

absl::Status StoreImpl::Sync() {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::MutexLock l(&mu_);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  // An empty synced write through the queue: it syncs the log past every
  // write queued before it, and rides along with any concurrent one.
  return WriteLocked(rocksdb::WriteBatch(), tail_, "syncing the store",
                     /*sync=*/true);
}

void StoreImpl::NoteGroupWrittenLocked(bool synced) {
  ++written_mark_;
  // A synced group made every earlier write durable too: the log is
  // written in order.
  if (synced) RaiseDurableMark(written_mark_);
}

void StoreImpl::RaiseDurableMark(uint64_t mark) {
  uint64_t now = durable_mark_.load();
  while (now < mark && !durable_mark_.compare_exchange_weak(now, mark)) {
  }
}

absl::Status StoreImpl::RequestSync(uint64_t mark) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::MutexLock l(&sync_mu_);
  OUTBOX_RETURN_IF_ERROR(sync_error_);
  if (sync_stop_) return absl::FailedPreconditionError("the store is closed");
  if (mark <= sync_requested_) return absl::OkStatus();  // asked already
  sync_requested_ = mark;
  if (!syncer_.joinable()) syncer_ = std::thread([this] { SyncerLoop(); });
  sync_cv_.Signal();
  return absl::OkStatus();
}

void StoreImpl::SyncerLoop() {
  absl::MutexLock l(&sync_mu_);
  uint64_t answered = 0;  // the highest request the wakeup was called for
  for (;;) {
    while (!sync_stop_ && sync_requested_ <= answered) sync_cv_.Wait(&sync_mu_);
    if (sync_stop_) return;
    const uint64_t wanted = sync_requested_;
    bool broke = false;
    sync_mu_.Unlock();
    // A synced Commit may have covered it meanwhile: group commit shares
    // the producers' fsyncs with the agent.
    const absl::Status synced =
        durable_mark_.load() < wanted ? SyncOnce(&broke) : absl::OkStatus();
    sync_mu_.Lock();
    // Recorded before the wakeup: the requester's next RequestSync sees it.
    if (broke) sync_error_ = synced;
    // (A store that already refused writes, a full disk say, is not synced:
    // the request is dropped, and the next write says why. After a reopen,
    // everything written before it is durable: ReopenAfterFullDiskLocked.)
    answered = wanted;
    sync_mu_.Unlock();
    Wake();  // the requester looks at DurableMark (or at the error)
    sync_mu_.Lock();
    if (broke) return;
  }
}

absl::Status StoreImpl::SyncOnce(bool* broke) {
  // An empty synced write through the writer queue, as Sync(): it raises
  // the durable mark past every group written before it (and takes the
  // batches of writers queued meanwhile along). Not db_->SyncWAL() beside
  // the writers: after a log write failed, RocksDB asserts if its log is
  // then synced, and a writer may fail at any moment (a full disk).
  const absl::Status synced = Sync();
  // A full disk is not the end: the next write reopens the store, and
  // everything written before is durable then (ReopenAfterFullDiskLocked).
  // Any other failure leaves the store refusing writes until reopened.
  *broke = !synced.ok() && !absl::IsResourceExhausted(synced);
  return synced;
}

bool StoreImpl::TEST_SyncerThread(std::thread::native_handle_type* handle) {
  absl::MutexLock l(&sync_mu_);
  if (!syncer_.joinable()) return false;
  *handle = syncer_.native_handle();
  return true;
}

void StoreImpl::StopSyncer() {
  std::thread syncer;
  {
    absl::MutexLock l(&sync_mu_);
    sync_stop_ = true;
    sync_cv_.Signal();
    syncer = std::move(syncer_);
  }
  if (syncer.joinable()) syncer.join();
}

}  // namespace outbox
