// Copyright (c) edge-outbox authors.
//
// The open files and directories FaultInjectionFileSystem hands out. Each
// routes its mutating calls through the file system (one mutex, one op
// count, one durability model) and forwards everything else to the base.

#ifndef OUTBOX_TESTS_FAULT_FS_FAULT_FILES_H_
#define OUTBOX_TESTS_FAULT_FS_FAULT_FILES_H_

#include <memory>

#include "rocksdb/file_system.h"
#include "tests/fault_fs/fault_injection_fs.h"

namespace outbox::testing {

// Thread-safety: as the base file; the shared state lives in the file
// system, under its mutex. `fs` must outlive the file.
class FaultWritableFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultWritableFile(FaultInjectionFileSystem* fs,
                    FaultInjectionFileSystem::Handle handle,
                    std::unique_ptr<rocksdb::FSWritableFile> base);

  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     const rocksdb::DataVerificationInfo& info,
                                     rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Truncate(uint64_t size, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Close(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Flush(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                         rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RangeSync(uint64_t offset, uint64_t nbytes,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override;

  // Preallocation is off: a preallocated base file ftruncate()s itself on
  // Close() (even from its destructor), which could undo a power cut that
  // was simulated while the file was still open.
  void SetPreallocationBlockSize(size_t /*size*/) override {}
  void PrepareWrite(size_t /*offset*/, size_t /*len*/,
                    const rocksdb::IOOptions& /*options*/,
                    rocksdb::IODebugContext* /*dbg*/) override {}
  rocksdb::IOStatus Allocate(uint64_t /*offset*/, uint64_t /*len*/,
                             const rocksdb::IOOptions& /*options*/,
                             rocksdb::IODebugContext* /*dbg*/) override {
    return rocksdb::IOStatus::OK();
  }

 private:
  FaultInjectionFileSystem* const fs_;
  const FaultInjectionFileSystem::Handle handle_;
};

// Thread-safety: as the base file. `fs` must outlive the file.
class FaultRandomRWFile : public rocksdb::FSRandomRWFileOwnerWrapper {
 public:
  FaultRandomRWFile(FaultInjectionFileSystem* fs,
                    FaultInjectionFileSystem::Handle handle,
                    std::unique_ptr<rocksdb::FSRandomRWFile> base);

  rocksdb::IOStatus Write(uint64_t offset, const rocksdb::Slice& data,
                          const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Flush(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                         rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Close(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override;

 private:
  FaultInjectionFileSystem* const fs_;
  const FaultInjectionFileSystem::Handle handle_;
};

// Safe for concurrent use, like FSDirectory. `fs` must outlive it.
class FaultDirectory : public rocksdb::FSDirectoryWrapper {
 public:
  FaultDirectory(FaultInjectionFileSystem* fs,
                 FaultInjectionFileSystem::Handle handle,
                 std::unique_ptr<rocksdb::FSDirectory> base);

  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override;
  // Whatever the reason RocksDB gives (kNewFileSynced, kFileRenamed, ...),
  // this is a full directory fsync: every name in it becomes durable.
  rocksdb::IOStatus FsyncWithDirOptions(
      const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg,
      const rocksdb::DirFsyncOptions& dir_fsync_options) override;

 private:
  FaultInjectionFileSystem* const fs_;
  const FaultInjectionFileSystem::Handle handle_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_FAULT_FS_FAULT_FILES_H_
