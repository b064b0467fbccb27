// Copyright (c) edge-outbox authors.

#include "tests/fault_fs/fault_files.h"

#include <utility>

namespace outbox::testing {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;
using FS = FaultInjectionFileSystem;

FaultWritableFile::FaultWritableFile(
    FS* fs, FS::Handle handle, std::unique_ptr<rocksdb::FSWritableFile> base)
    : FSWritableFileOwnerWrapper(std::move(base)),
      fs_(fs),
      handle_(std::move(handle)) {}

IOStatus FaultWritableFile::Append(const Slice& data, const IOOptions& options,
                                   IODebugContext* dbg) {
  return fs_->FileOp(handle_, OpKind::kWrite, FS::kAppendAtEnd, data.size(),
                     [&] { return target()->Append(data, options, dbg); });
}

IOStatus FaultWritableFile::Append(const Slice& data, const IOOptions& options,
                                   const rocksdb::DataVerificationInfo& info,
                                   IODebugContext* dbg) {
  return fs_->FileOp(
      handle_, OpKind::kWrite, FS::kAppendAtEnd, data.size(),
      [&] { return target()->Append(data, options, info, dbg); });
}

IOStatus FaultWritableFile::PositionedAppend(const Slice& data, uint64_t offset,
                                             const IOOptions& options,
                                             IODebugContext* dbg) {
  return fs_->FileOp(handle_, OpKind::kWrite, offset, data.size(), [&] {
    return target()->PositionedAppend(data, offset, options, dbg);
  });
}

IOStatus FaultWritableFile::PositionedAppend(
    const Slice& data, uint64_t offset, const IOOptions& options,
    const rocksdb::DataVerificationInfo& info, IODebugContext* dbg) {
  return fs_->FileOp(handle_, OpKind::kWrite, offset, data.size(), [&] {
    return target()->PositionedAppend(data, offset, options, info, dbg);
  });
}

IOStatus FaultWritableFile::Truncate(uint64_t size, const IOOptions& options,
                                     IODebugContext* dbg) {
  return fs_->FileOp(handle_, OpKind::kTruncate, 0, size,
                     [&] { return target()->Truncate(size, options, dbg); });
}

IOStatus FaultWritableFile::Close(const IOOptions& options,
                                  IODebugContext* dbg) {
  // Close() syncs nothing: the model is untouched. Once dead, the base file
  // is closed by its destructor instead.
  return fs_->QuietOp(handle_, [&] { return target()->Close(options, dbg); });
}

IOStatus FaultWritableFile::Flush(const IOOptions& options,
                                  IODebugContext* dbg) {
  return fs_->QuietOp(handle_, [&] { return target()->Flush(options, dbg); });
}

IOStatus FaultWritableFile::Sync(const IOOptions& options,
                                 IODebugContext* dbg) {
  return fs_->FileOp(handle_, OpKind::kSync, 0, 0,
                     [&] { return target()->Sync(options, dbg); });
}

IOStatus FaultWritableFile::Fsync(const IOOptions& options,
                                  IODebugContext* dbg) {
  return fs_->FileOp(handle_, OpKind::kSync, 0, 0,
                     [&] { return target()->Fsync(options, dbg); });
}

IOStatus FaultWritableFile::RangeSync(uint64_t offset, uint64_t nbytes,
                                      const IOOptions& options,
                                      IODebugContext* dbg) {
  return fs_->FileOp(handle_, OpKind::kRangeSync, 0, 0, [&] {
    return target()->RangeSync(offset, nbytes, options, dbg);
  });
}

FaultRandomRWFile::FaultRandomRWFile(
    FS* fs, FS::Handle handle, std::unique_ptr<rocksdb::FSRandomRWFile> base)
    : FSRandomRWFileOwnerWrapper(std::move(base)),
      fs_(fs),
      handle_(std::move(handle)) {}

IOStatus FaultRandomRWFile::Write(uint64_t offset, const Slice& data,
                                  const IOOptions& options,
                                  IODebugContext* dbg) {
  return fs_->FileOp(handle_, OpKind::kWrite, offset, data.size(), [&] {
    return target()->Write(offset, data, options, dbg);
  });
}

IOStatus FaultRandomRWFile::Flush(const IOOptions& options,
                                  IODebugContext* dbg) {
  return fs_->QuietOp(handle_, [&] { return target()->Flush(options, dbg); });
}

IOStatus FaultRandomRWFile::Sync(const IOOptions& options,
                                 IODebugContext* dbg) {
  return fs_->FileOp(handle_, OpKind::kSync, 0, 0,
                     [&] { return target()->Sync(options, dbg); });
}

IOStatus FaultRandomRWFile::Fsync(const IOOptions& options,
                                  IODebugContext* dbg) {
  return fs_->FileOp(handle_, OpKind::kSync, 0, 0,
                     [&] { return target()->Fsync(options, dbg); });
}

IOStatus FaultRandomRWFile::Close(const IOOptions& options,
                                  IODebugContext* dbg) {
  return fs_->QuietOp(handle_, [&] { return target()->Close(options, dbg); });
}

FaultDirectory::FaultDirectory(FS* fs, FS::Handle handle,
                               std::unique_ptr<rocksdb::FSDirectory> base)
    : FSDirectoryWrapper(std::move(base)),
      fs_(fs),
      handle_(std::move(handle)) {}

IOStatus FaultDirectory::Fsync(const IOOptions& options, IODebugContext* dbg) {
  return fs_->DirSyncOp(
      handle_, [&] { return FSDirectoryWrapper::Fsync(options, dbg); });
}

IOStatus FaultDirectory::FsyncWithDirOptions(
    const IOOptions& options, IODebugContext* dbg,
    const rocksdb::DirFsyncOptions& dir_fsync_options) {
  return fs_->DirSyncOp(handle_, [&] {
    return FSDirectoryWrapper::FsyncWithDirOptions(options, dbg,
                                                   dir_fsync_options);
  });
}

}  // namespace outbox::testing
