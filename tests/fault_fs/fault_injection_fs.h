// Copyright (c) edge-outbox authors.
//
// A rocksdb::FileSystem for crash tests: it remembers what a power cut would
// keep, can put the disk back into exactly that state, can "lose power" at
// any chosen mutating operation, and can fail writes and syncs on demand
// (EIO, ENOSPC). Debian's RocksDB ships no such utility, so this is ours.
//
// Durability model (strict POSIX, stricter than ext4 in practice):
//   * File data is durable only up to the length the file had at its last
//     successful Sync() or Fsync() (fdatasync/fsync). Close() does not sync.
//     RangeSync() (sync_file_range) makes nothing durable: it only starts
//     writeback and persists no metadata, not even the file length.
//   * Truncating or overwriting already-synced bytes (Truncate, O_TRUNC in
//     NewWritableFile, PositionedAppend/Write below the synced length) is
//     undone by a power cut until the file is synced again.
//   * A name (create, delete, rename, link) is durable only after a
//     successful fsync of its directory (FSDirectory::Fsync or
//     FsyncWithDirOptions, whatever the reason given). A power cut deletes
//     files created since, brings back files deleted since, undoes renames
//     and links since, and restores the file a rename replaced (CURRENT).
//     Renames across two directories are two independent name changes.
//   * A file's bytes and its name are independent: a synced file whose name
//     was never made durable vanishes; a durable name whose file was never
//     synced comes back empty (or at its last synced length).
// What a real ext4 (data=ordered, barriers on) gives beyond this, and this
// file system deliberately does not: fsync of a new file usually commits
// its directory entry too (same journal transaction), renames are atomic
// across directories, and replace-via-rename of a file truncated to zero
// gets an implicit flush (auto_da_alloc). Code that passes here does not
// lean on any of that.
// Simplifications: directories themselves (CreateDir, DeleteDir) are durable
// at once; hard links restored by a power cut come back as separate copies;
// a file is never torn inside one write (all of an Append or none of it).
// Files the model has not seen yet are taken as durable as they are on
// disk, so the file system can wrap an existing directory. The info LOG
// (NewLogger) and LOCK file (LockFile) go straight to the base file system:
// they take no part in recovery. Preallocation is switched off, because the
// base file's Close() would otherwise ftruncate() the file behind the
// model's back. ReuseWritableFile (WAL recycling) is NotSupported: RocksDB
// disables recycling under kPointInTimeRecovery, and a loud failure beats a
// wrong simulation.
//
// Death: once dead (Kill(), SetCrashAfterOps(), or the crash hook) every
// mutating call fails with IOError and changes nothing on disk, as if the
// power were gone; reads keep working. Mutating calls: see OpKind. Then the
// test closes the DB (ignoring errors), calls SimulatePowerCut(), Revive(),
// and reopens.
//
// Thread-safety: safe for concurrent use by any number of threads (RocksDB
// calls it from its background threads). Every mutating call, including the
// base operation it forwards, runs under one mutex, so mutating calls are
// totally ordered, the op count is exact, and nothing reaches the disk once
// the file system is dead. The crash hook runs under that mutex and must not
// call back into this file system.

#ifndef OUTBOX_TESTS_FAULT_FS_FAULT_INJECTION_FS_H_
#define OUTBOX_TESTS_FAULT_FS_FAULT_INJECTION_FS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/file_system.h"
#include "rocksdb/io_status.h"

namespace outbox::testing {

class DurabilityModel;
struct Inode;

// The mutating operations, each a possible crash point.
enum class OpKind : int {
  kCreateFile = 0,  // NewWritableFile, ReopenWritableFile, NewRandomRWFile.
  kWrite,           // Append, PositionedAppend, FSRandomRWFile::Write.
  kTruncate,        // FSWritableFile::Truncate, FileSystem::Truncate.
  kSync,            // Sync, Fsync of a file.
  kRangeSync,       // RangeSync (not a durability point, still a crash point).
  kSyncDir,         // FSDirectory::Fsync, FsyncWithDirOptions.
  kRenameFile,
  kLinkFile,
  kDeleteFile,
  kCreateDir,  // CreateDir, CreateDirIfMissing.
  kDeleteDir,
};
inline constexpr int kNumOpKinds = static_cast<int>(OpKind::kDeleteDir) + 1;
const char* OpKindName(OpKind kind);

// RocksDB's file kinds by name, as a bit mask for error injection.
enum FileKind : uint32_t {
  kWalFile = 1 << 0,       // *.log
  kTableFile = 1 << 1,     // *.sst
  kManifestFile = 1 << 2,  // MANIFEST-*
  kOtherFile = 1 << 3,     // CURRENT, OPTIONS-*, IDENTITY, *.dbtmp, ...
  kAnyFile = kWalFile | kTableFile | kManifestFile | kOtherFile,
};
FileKind FileKindOf(const std::string& path);

// What InjectErrors() makes fail.
struct ErrorInjection {
  enum class Error {
    kNoSpace,  // IOStatus::NoSpace(): the DB reports Status::IsNoSpace().
    kIOError,  // IOStatus::IOError(): EIO.
  };
  Error error = Error::kNoSpace;
  // Append, PositionedAppend, FSRandomRWFile::Write. A failed write writes
  // nothing. Default: true.
  bool writes = true;
  // Sync, Fsync. A failed sync makes nothing durable (on Linux the dirty
  // pages may even be dropped; the model keeps them). Default: false.
  bool syncs = false;
  // Bit mask of FileKind the error hits. Default: every file.
  uint32_t file_kinds = kAnyFile;
  // Fail only the next `times` matching calls; -1 = until ClearErrors().
  int times = -1;
};

struct FaultInjectionOptions {
  // If true, file syncs, RangeSync and directory fsyncs also reach the base
  // file system. The simulation does not need them: the model alone decides
  // what a simulated power cut keeps, and real fsyncs only make a crash loop
  // of thousands of cycles wait for the disk. Turn on to also exercise the
  // real calls. Default: false.
  bool forward_syncs = false;
};

// The file system described at the top of this file. Safe for concurrent
// access from any number of threads without external synchronization. Hold
// it by shared_ptr: rocksdb::NewCompositeEnv() and NewCrashTestEnv() share it.
class FaultInjectionFileSystem : public rocksdb::FileSystemWrapper {
 public:
  using CrashHook = std::function<bool(OpKind kind, const std::string& path)>;

  explicit FaultInjectionFileSystem(
      std::shared_ptr<rocksdb::FileSystem> base =
          rocksdb::FileSystem::Default(),
      FaultInjectionOptions options = FaultInjectionOptions());
  ~FaultInjectionFileSystem() override;

  static const char* kClassName() { return "OutboxFaultInjectionFileSystem"; }
  const char* Name() const override { return kClassName(); }

  // --- Power cuts ---------------------------------------------------------

  // Puts the disk into the state a power cut would leave (see the model
  // above) and starts a new epoch: handles opened before fail with IOError.
  // REQUIRES: the DB is closed, or this file system is dead.
  // Errors: kInternal when the real disk under the test fails.
  absl::Status SimulatePowerCut() ABSL_LOCKS_EXCLUDED(mu_);
  // Loses power now: every later mutating call fails.
  void Kill() ABSL_LOCKS_EXCLUDED(mu_);
  // Power is back: clears death and any armed crash point (hook included).
  // Injected errors and op counts are kept.
  void Revive() ABSL_LOCKS_EXCLUDED(mu_);
  bool IsDead() const ABSL_LOCKS_EXCLUDED(mu_);
  // Lets exactly `n` more mutating calls through, then dies: call n+1 fails.
  void SetCrashAfterOps(uint64_t n) ABSL_LOCKS_EXCLUDED(mu_);
  // Called before every mutating call while alive; returning true kills the
  // file system and fails that call. nullptr removes the hook.
  void SetCrashHook(CrashHook hook) ABSL_LOCKS_EXCLUDED(mu_);

  // The call the crash point or hook refused: where the power went. None
  // after Kill() or while alive; cleared by Revive().
  struct CrashPoint {
    OpKind kind;
    std::string path;
    uint64_t ops_before;  // Mutating calls that went through before it.
  };
  std::optional<CrashPoint> crash_point() const ABSL_LOCKS_EXCLUDED(mu_);

  // --- Counters -----------------------------------------------------------

  // Mutating calls that went through (reached the disk or an injected
  // error), per kind and in total, since construction or ResetOpCounts().
  uint64_t op_count(OpKind kind) const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t total_ops() const ABSL_LOCKS_EXCLUDED(mu_);
  // "write=12 sync=4 ..." for test logs.
  std::string OpCountsString() const ABSL_LOCKS_EXCLUDED(mu_);
  void ResetOpCounts() ABSL_LOCKS_EXCLUDED(mu_);
  // Names created, deleted, renamed or linked since their directory's last
  // fsync: what a power cut now would undo.
  size_t UndurableNameCount() const ABSL_LOCKS_EXCLUDED(mu_);

  // --- Error injection ----------------------------------------------------

  // Replaces any earlier injection.
  void InjectErrors(const ErrorInjection& injection) ABSL_LOCKS_EXCLUDED(mu_);
  // Space returns: writes and syncs behave normally again.
  void ClearErrors() ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t injected_error_count() const ABSL_LOCKS_EXCLUDED(mu_);

  // --- rocksdb::FileSystem ------------------------------------------------

  rocksdb::IOStatus NewWritableFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& fname, const std::string& old_fname,
      const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewRandomRWFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomRWFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewDirectory(const std::string& name,
                                 const rocksdb::IOOptions& options,
                                 std::unique_ptr<rocksdb::FSDirectory>* result,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& fname,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Truncate(const std::string& fname, size_t size,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& src,
                               const std::string& target,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus LinkFile(const std::string& src, const std::string& target,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus CreateDir(const std::string& dirname,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus CreateDirIfMissing(const std::string& dirname,
                                       const rocksdb::IOOptions& options,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteDir(const std::string& dirname,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override;

 private:
  friend class FaultWritableFile;
  friend class FaultRandomRWFile;
  friend class FaultDirectory;

  // What a wrapped file or directory knows about itself; immutable.
  struct Handle {
    std::shared_ptr<Inode> inode;  // Fields guarded by mu_.
    uint64_t epoch = 0;            // Power-cut epoch it was opened in.
    std::string path;              // Normalised name it was opened by.
  };
  // Where a file write lands: kAppendAtEnd, or a byte offset.
  static constexpr uint64_t kAppendAtEnd = ~uint64_t{0};

  // One mutating call on an open file: the checks shared by every mutating
  // call, the model's bookkeeping around `io`, then `io` itself.
  // `offset`/`length`: for kWrite, where and how much; for kTruncate,
  // `length` is the new size. Unused otherwise.
  rocksdb::IOStatus FileOp(const Handle& file, OpKind kind, uint64_t offset,
                           uint64_t length,
                           absl::FunctionRef<rocksdb::IOStatus()> io)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Close() and Flush() are no crash points (they change nothing durable)
  // but touch nothing once dead or stale.
  rocksdb::IOStatus QuietOp(const Handle& file,
                            absl::FunctionRef<rocksdb::IOStatus()> io)
      ABSL_LOCKS_EXCLUDED(mu_);
  rocksdb::IOStatus DirSyncOp(const Handle& dir,
                              absl::FunctionRef<rocksdb::IOStatus()> io)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The checks every mutating call starts with: dead, stale, crash point,
  // counting, injected error. OK means go ahead.
  rocksdb::IOStatus Admit(OpKind kind, const std::string& path, uint64_t epoch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  rocksdb::IOStatus OpenForWrite(const std::string& fname, OpKind kind,
                                 bool truncate,
                                 absl::FunctionRef<rocksdb::IOStatus()> open,
                                 Handle* handle) ABSL_LOCKS_EXCLUDED(mu_);
  rocksdb::IOStatus CreateDirOp(const std::string& dirname,
                                absl::FunctionRef<rocksdb::IOStatus()> io)
      ABSL_LOCKS_EXCLUDED(mu_);

  const bool forward_syncs_;
  mutable absl::Mutex mu_;
  std::unique_ptr<DurabilityModel> model_ ABSL_GUARDED_BY(mu_);
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  bool dead_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<uint64_t> ops_until_crash_ ABSL_GUARDED_BY(mu_);
  CrashHook crash_hook_ ABSL_GUARDED_BY(mu_);
  std::optional<CrashPoint> crash_point_ ABSL_GUARDED_BY(mu_);
  std::array<uint64_t, kNumOpKinds> op_counts_ ABSL_GUARDED_BY(mu_) = {};
  std::optional<ErrorInjection> injection_ ABSL_GUARDED_BY(mu_);
  uint64_t injected_errors_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_FAULT_FS_FAULT_INJECTION_FS_H_
