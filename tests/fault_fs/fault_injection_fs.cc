// Copyright (c) edge-outbox authors.

#include "tests/fault_fs/fault_injection_fs.h"

#include <numeric>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/fault_fs/durability_model.h"

namespace outbox::testing {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;

namespace {

IOStatus PowerIsGone(const std::string& path) {
  return IOStatus::IOError("fault_fs: simulated power cut, file system dead",
                           path);
}

}  // namespace

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kCreateFile:
      return "create";
    case OpKind::kWrite:
      return "write";
    case OpKind::kTruncate:
      return "truncate";
    case OpKind::kSync:
      return "sync";
    case OpKind::kRangeSync:
      return "range_sync";
    case OpKind::kSyncDir:
      return "sync_dir";
    case OpKind::kRenameFile:
      return "rename";
    case OpKind::kLinkFile:
      return "link";
    case OpKind::kDeleteFile:
      return "delete";
    case OpKind::kCreateDir:
      return "create_dir";
    case OpKind::kDeleteDir:
      return "delete_dir";
  }
  return "unknown";
}

FileKind FileKindOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string base =
      slash == std::string::npos ? path : path.substr(slash + 1);
  if (absl::EndsWith(base, ".log")) return kWalFile;
  if (absl::EndsWith(base, ".sst")) return kTableFile;
  if (absl::StartsWith(base, "MANIFEST-")) return kManifestFile;
  return kOtherFile;
}

FaultInjectionFileSystem::FaultInjectionFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base, FaultInjectionOptions options)
    : FileSystemWrapper(base),
      forward_syncs_(options.forward_syncs),
      model_(std::make_unique<DurabilityModel>(base.get())) {}

FaultInjectionFileSystem::~FaultInjectionFileSystem() = default;

// --- Control ---------------------------------------------------------------

absl::Status FaultInjectionFileSystem::SimulatePowerCut() {
  absl::MutexLock l(&mu_);
  const IOStatus s = model_->PowerCut();
  // Whatever happened, handles from before the cut must not write again:
  // their file may have been rewritten under them.
  ++epoch_;
  if (!s.ok()) {
    return absl::InternalError(absl::StrCat(
        "simulated power cut could not restore the test directory: ",
        s.ToString()));
  }
  return absl::OkStatus();
}

void FaultInjectionFileSystem::Kill() {
  absl::MutexLock l(&mu_);
  dead_ = true;
}

void FaultInjectionFileSystem::Revive() {
  absl::MutexLock l(&mu_);
  dead_ = false;
  ops_until_crash_.reset();
  crash_hook_ = nullptr;
  crash_point_.reset();
}

bool FaultInjectionFileSystem::IsDead() const {
  absl::MutexLock l(&mu_);
  return dead_;
}

void FaultInjectionFileSystem::SetCrashAfterOps(uint64_t n) {
  absl::MutexLock l(&mu_);
  ops_until_crash_ = n;
}

void FaultInjectionFileSystem::SetCrashHook(CrashHook hook) {
  absl::MutexLock l(&mu_);
  crash_hook_ = std::move(hook);
}

std::optional<FaultInjectionFileSystem::CrashPoint>
FaultInjectionFileSystem::crash_point() const {
  absl::MutexLock l(&mu_);
  return crash_point_;
}

uint64_t FaultInjectionFileSystem::op_count(OpKind kind) const {
  absl::MutexLock l(&mu_);
  return op_counts_[static_cast<int>(kind)];
}

uint64_t FaultInjectionFileSystem::total_ops() const {
  absl::MutexLock l(&mu_);
  return std::accumulate(op_counts_.begin(), op_counts_.end(), uint64_t{0});
}

std::string FaultInjectionFileSystem::OpCountsString() const {
  absl::MutexLock l(&mu_);
  std::string out;
  for (int i = 0; i < kNumOpKinds; ++i) {
    if (op_counts_[i] == 0) continue;
    absl::StrAppend(&out, out.empty() ? "" : " ",
                    OpKindName(static_cast<OpKind>(i)), "=", op_counts_[i]);
  }
  return out;
}

void FaultInjectionFileSystem::ResetOpCounts() {
  absl::MutexLock l(&mu_);
  op_counts_.fill(0);
}

size_t FaultInjectionFileSystem::UndurableNameCount() const {
  absl::MutexLock l(&mu_);
  return model_->UndurableNameCount();
}

void FaultInjectionFileSystem::InjectErrors(const ErrorInjection& injection) {
  absl::MutexLock l(&mu_);
  injection_ = injection;
}

void FaultInjectionFileSystem::ClearErrors() {
  absl::MutexLock l(&mu_);
  injection_.reset();
}

uint64_t FaultInjectionFileSystem::injected_error_count() const {
  absl::MutexLock l(&mu_);
  return injected_errors_;
}

// --- The gate every mutating call passes -----------------------------------

IOStatus FaultInjectionFileSystem::Admit(OpKind kind, const std::string& path,
                                         uint64_t epoch) {
  if (dead_) return PowerIsGone(path);
  if (epoch != epoch_) {
    return IOStatus::IOError(
        "fault_fs: file opened before the last simulated power cut", path);
  }
  bool die = false;
  if (ops_until_crash_.has_value()) {
    if (*ops_until_crash_ == 0) {
      die = true;
    } else {
      --*ops_until_crash_;
    }
  }
  if (!die && crash_hook_ && crash_hook_(kind, path)) die = true;
  if (die) {
    dead_ = true;
    crash_point_ = CrashPoint{
        kind, path,
        std::accumulate(op_counts_.begin(), op_counts_.end(), uint64_t{0})};
    return PowerIsGone(path);
  }
  ++op_counts_[static_cast<int>(kind)];

  if (!injection_.has_value()) return IOStatus::OK();
  const bool hits_kind = (kind == OpKind::kWrite && injection_->writes) ||
                         (kind == OpKind::kSync && injection_->syncs);
  if (!hits_kind || (injection_->file_kinds & FileKindOf(path)) == 0) {
    return IOStatus::OK();
  }
  const ErrorInjection::Error error = injection_->error;
  if (injection_->times > 0 && --injection_->times == 0) injection_.reset();
  ++injected_errors_;
  if (error == ErrorInjection::Error::kNoSpace) {
    // NoSpace() is kIOError with subcode kNoSpace: what Status::IsNoSpace()
    // tests, and what RocksDB's error handler treats as "disk full".
    return IOStatus::NoSpace("fault_fs: injected ENOSPC", path);
  }
  return IOStatus::IOError("fault_fs: injected EIO", path);
}

IOStatus FaultInjectionFileSystem::FileOp(const Handle& file, OpKind kind,
                                          uint64_t offset, uint64_t length,
                                          absl::FunctionRef<IOStatus()> io) {
  absl::MutexLock l(&mu_);
  IOStatus s = Admit(kind, file.path, file.epoch);
  if (!s.ok()) return s;
  Inode& inode = *file.inode;
  const uint64_t at = offset == kAppendAtEnd ? inode.size : offset;
  // Save the durable bytes before the base call can destroy them.
  if (kind == OpKind::kWrite) s = model_->PrepareOverwrite(inode, at);
  if (kind == OpKind::kTruncate) s = model_->PrepareOverwrite(inode, length);
  if (!s.ok()) return s;
  const bool is_sync = kind == OpKind::kSync || kind == OpKind::kRangeSync;
  if (!is_sync || forward_syncs_) s = io();
  if (!s.ok()) return s;
  if (kind == OpKind::kWrite) DurabilityModel::Wrote(inode, at, length);
  if (kind == OpKind::kTruncate) DurabilityModel::Truncated(inode, length);
  if (kind == OpKind::kSync) DurabilityModel::Synced(inode);
  return s;
}

IOStatus FaultInjectionFileSystem::QuietOp(const Handle& file,
                                           absl::FunctionRef<IOStatus()> io) {
  absl::MutexLock l(&mu_);
  if (dead_) return PowerIsGone(file.path);
  if (file.epoch != epoch_) {
    return IOStatus::IOError(
        "fault_fs: file opened before the last simulated power cut", file.path);
  }
  return io();
}

IOStatus FaultInjectionFileSystem::DirSyncOp(const Handle& dir,
                                             absl::FunctionRef<IOStatus()> io) {
  absl::MutexLock l(&mu_);
  IOStatus s = Admit(OpKind::kSyncDir, dir.path, dir.epoch);
  if (!s.ok()) return s;
  if (forward_syncs_) s = io();
  if (s.ok()) model_->DirSynced(dir.path);
  return s;
}

}  // namespace outbox::testing
