// Copyright (c) edge-outbox authors.
//
// FaultInjectionFileSystem's rocksdb::FileSystem methods: each mutating one
// passes the gate (Admit), keeps the durability model in step, and forwards.

#include <memory>
#include <utility>

#include "tests/fault_fs/durability_model.h"
#include "tests/fault_fs/fault_files.h"
#include "tests/fault_fs/fault_injection_fs.h"

namespace outbox::testing {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;

IOStatus FaultInjectionFileSystem::OpenForWrite(
    const std::string& fname, OpKind kind, bool truncate,
    absl::FunctionRef<IOStatus()> open, Handle* handle) {
  absl::MutexLock l(&mu_);
  const std::string path = NormalizePath(fname);
  IOStatus s = Admit(kind, path, epoch_);
  if (!s.ok()) return s;
  const std::shared_ptr<Inode> existing = model_->Live(path);
  if (truncate && existing != nullptr) {
    s = model_->PrepareOverwrite(*existing, 0);
    if (!s.ok()) return s;
  }
  s = open();
  if (!s.ok()) return s;
  *handle = Handle{model_->Opened(path, truncate), epoch_, path};
  return s;
}

IOStatus FaultInjectionFileSystem::CreateDirOp(
    const std::string& dirname, absl::FunctionRef<IOStatus()> io) {
  absl::MutexLock l(&mu_);
  IOStatus s = Admit(OpKind::kCreateDir, NormalizePath(dirname), epoch_);
  if (!s.ok()) return s;
  return io();
}

// --- rocksdb::FileSystem ---------------------------------------------------

IOStatus FaultInjectionFileSystem::NewWritableFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSWritableFile> base;
  Handle handle;
  // The base opens with O_CREAT | O_TRUNC.
  IOStatus s = OpenForWrite(
      fname, OpKind::kCreateFile, /*truncate=*/true,
      [&] { return target()->NewWritableFile(fname, options, &base, dbg); },
      &handle);
  if (!s.ok()) return s;
  *result = std::make_unique<FaultWritableFile>(this, std::move(handle),
                                                std::move(base));
  return s;
}

IOStatus FaultInjectionFileSystem::ReopenWritableFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSWritableFile> base;
  Handle handle;
  IOStatus s = OpenForWrite(
      fname, OpKind::kCreateFile, /*truncate=*/false,
      [&] { return target()->ReopenWritableFile(fname, options, &base, dbg); },
      &handle);
  if (!s.ok()) return s;
  *result = std::make_unique<FaultWritableFile>(this, std::move(handle),
                                                std::move(base));
  return s;
}

IOStatus FaultInjectionFileSystem::ReuseWritableFile(
    const std::string& fname, const std::string& /*old_fname*/,
    const rocksdb::FileOptions& /*options*/,
    std::unique_ptr<rocksdb::FSWritableFile>* /*result*/,
    IODebugContext* /*dbg*/) {
  return IOStatus::NotSupported(
      "fault_fs: WAL recycling (recycle_log_file_num) is not simulated", fname);
}

IOStatus FaultInjectionFileSystem::NewRandomRWFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSRandomRWFile>* result, IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSRandomRWFile> base;
  Handle handle;
  IOStatus s = OpenForWrite(
      fname, OpKind::kCreateFile, /*truncate=*/false,
      [&] { return target()->NewRandomRWFile(fname, options, &base, dbg); },
      &handle);
  if (!s.ok()) return s;
  *result = std::make_unique<FaultRandomRWFile>(this, std::move(handle),
                                                std::move(base));
  return s;
}

IOStatus FaultInjectionFileSystem::NewDirectory(
    const std::string& name, const IOOptions& options,
    std::unique_ptr<rocksdb::FSDirectory>* result, IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSDirectory> base;
  // Opening a directory changes nothing on disk: not a crash point.
  IOStatus s = target()->NewDirectory(name, options, &base, dbg);
  if (!s.ok()) return s;
  uint64_t epoch;
  {
    absl::MutexLock l(&mu_);
    epoch = epoch_;
  }
  *result = std::make_unique<FaultDirectory>(
      this, Handle{nullptr, epoch, NormalizePath(name)}, std::move(base));
  return s;
}

IOStatus FaultInjectionFileSystem::DeleteFile(const std::string& fname,
                                              const IOOptions& options,
                                              IODebugContext* dbg) {
  absl::MutexLock l(&mu_);
  const std::string path = NormalizePath(fname);
  IOStatus s = Admit(OpKind::kDeleteFile, path, epoch_);
  if (!s.ok()) return s;
  s = model_->PrepareUnname(path);
  if (!s.ok()) return s;
  s = target()->DeleteFile(fname, options, dbg);
  if (s.ok()) model_->Unlinked(path);
  return s;
}

IOStatus FaultInjectionFileSystem::Truncate(const std::string& fname,
                                            size_t size,
                                            const IOOptions& options,
                                            IODebugContext* dbg) {
  absl::MutexLock l(&mu_);
  const std::string path = NormalizePath(fname);
  IOStatus s = Admit(OpKind::kTruncate, path, epoch_);
  if (!s.ok()) return s;
  const std::shared_ptr<Inode> inode = model_->Live(path);
  if (inode != nullptr) s = model_->PrepareOverwrite(*inode, size);
  if (!s.ok()) return s;
  s = target()->Truncate(fname, size, options, dbg);
  if (s.ok() && inode != nullptr) DurabilityModel::Truncated(*inode, size);
  return s;
}

IOStatus FaultInjectionFileSystem::RenameFile(const std::string& src,
                                              const std::string& target_name,
                                              const IOOptions& options,
                                              IODebugContext* dbg) {
  absl::MutexLock l(&mu_);
  const std::string from = NormalizePath(src);
  const std::string to = NormalizePath(target_name);
  IOStatus s = Admit(OpKind::kRenameFile, from, epoch_);
  if (!s.ok()) return s;
  s = model_->PrepareRename(from, to);
  if (!s.ok()) return s;
  s = target()->RenameFile(src, target_name, options, dbg);
  if (s.ok()) model_->Renamed(from, to);
  return s;
}

IOStatus FaultInjectionFileSystem::LinkFile(const std::string& src,
                                            const std::string& target_name,
                                            const IOOptions& options,
                                            IODebugContext* dbg) {
  absl::MutexLock l(&mu_);
  const std::string from = NormalizePath(src);
  const std::string to = NormalizePath(target_name);
  IOStatus s = Admit(OpKind::kLinkFile, from, epoch_);
  if (!s.ok()) return s;
  model_->PrepareLink(from, to);
  s = target()->LinkFile(src, target_name, options, dbg);
  if (s.ok()) model_->Linked(from, to);
  return s;
}

IOStatus FaultInjectionFileSystem::CreateDir(const std::string& dirname,
                                             const IOOptions& options,
                                             IODebugContext* dbg) {
  return CreateDirOp(
      dirname, [&] { return target()->CreateDir(dirname, options, dbg); });
}

IOStatus FaultInjectionFileSystem::CreateDirIfMissing(
    const std::string& dirname, const IOOptions& options, IODebugContext* dbg) {
  return CreateDirOp(dirname, [&] {
    return target()->CreateDirIfMissing(dirname, options, dbg);
  });
}

IOStatus FaultInjectionFileSystem::DeleteDir(const std::string& dirname,
                                             const IOOptions& options,
                                             IODebugContext* dbg) {
  absl::MutexLock l(&mu_);
  const std::string path = NormalizePath(dirname);
  IOStatus s = Admit(OpKind::kDeleteDir, path, epoch_);
  if (!s.ok()) return s;
  s = target()->DeleteDir(dirname, options, dbg);
  if (s.ok()) model_->DirDeleted(path);
  return s;
}

}  // namespace outbox::testing
