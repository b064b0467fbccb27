// Copyright (c) edge-outbox authors.
//
// The bookkeeping behind FaultInjectionFileSystem: what of the files and names
// the base file system now shows would survive a power cut, and how to put
// the disk back into exactly that state. See fault_injection_fs.h for the
// durability model in words; this file implements it.

#ifndef OUTBOX_TESTS_FAULT_FS_DURABILITY_MODEL_H_
#define OUTBOX_TESTS_FAULT_FS_DURABILITY_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "rocksdb/file_system.h"
#include "rocksdb/io_status.h"

namespace outbox::testing {

// The contents of one file, as an inode: names come and go, data stays with
// the inode. Sizes count bytes from offset 0.
struct Inode {
  // Length the file has now (page cache view).
  uint64_t size = 0;
  // Bytes [0, synced_size) are on the platter as of the last file sync.
  uint64_t synced_size = 0;
  // Set when the live file no longer holds the durable bytes: they were
  // truncated away, overwritten in place, or the inode lost its last name.
  // Then the durable contents are exactly this string. Cleared by a sync.
  std::optional<std::string> saved;
  // Names that now refer to this inode (more than one after LinkFile).
  std::set<std::string> paths;
};

// Normalised path: no repeated or trailing '/'. The directory of a path is
// everything before its last '/' ("." when there is none).
std::string NormalizePath(const std::string& path);
std::string DirOf(const std::string& normalized_path);

// Tracks, per name, which inode the name shows now ("live") and which inode
// it showed as of the last fsync of its directory ("durable"). Names are
// tracked lazily: the first time an operation touches a name, whatever the
// base file system holds there is taken as fully durable (the files existed
// before this model started watching, or survived the last power cut).
//
// Every method that may read or rewrite files takes the base file system;
// calls that must happen *before* the base operation (because the base
// operation destroys durable bytes) are named Prepare*.
//
// REQUIRES: External synchronization (FaultInjectionFileSystem's mutex).
class DurabilityModel {
 public:
  explicit DurabilityModel(rocksdb::FileSystem* base) : base_(base) {}
  DurabilityModel(const DurabilityModel&) = delete;
  DurabilityModel& operator=(const DurabilityModel&) = delete;

  // The inode `path` names now (adopting an untracked file as durable), or
  // nullptr when there is no file. `path` must be normalised.
  std::shared_ptr<Inode> Live(const std::string& path);

  // Before `inode`'s bytes from `offset` on are overwritten or cut off:
  // keep a copy of its durable bytes if the live file is about to lose them.
  rocksdb::IOStatus PrepareOverwrite(Inode& inode, uint64_t offset);
  // Before DeleteFile(path): keep the durable bytes if `path` is the last
  // name of its inode (the base file system is about to free them).
  rocksdb::IOStatus PrepareUnname(const std::string& path);
  // Before RenameFile(src, dst) / LinkFile(src, dst): start tracking both
  // names while they still show their old files; for a rename, keep the
  // durable bytes of the file `dst` is about to stop naming.
  rocksdb::IOStatus PrepareRename(const std::string& src,
                                  const std::string& dst);
  void PrepareLink(const std::string& src, const std::string& dst);

  // After the base created or opened `path` for writing. `truncate` is
  // O_TRUNC (NewWritableFile); otherwise the file keeps its bytes. Returns
  // the inode the new handle writes.
  std::shared_ptr<Inode> Opened(const std::string& path, bool truncate);
  // After a successful write of `length` bytes at `offset` to `inode`.
  static void Wrote(Inode& inode, uint64_t offset, uint64_t length);
  // After a successful truncate of `inode` to `size`.
  static void Truncated(Inode& inode, uint64_t size);
  // After a successful Sync/Fsync: everything the file holds is durable.
  static void Synced(Inode& inode);

  // After a successful unlink/rename/link of names (already Prepare*d).
  void Unlinked(const std::string& path);
  void Renamed(const std::string& src, const std::string& dst);
  void Linked(const std::string& src, const std::string& dst);
  // After a successful fsync of `dir`: its names are durable as they are.
  void DirSynced(const std::string& dir);
  // After a successful DeleteDir: forget the names inside `dir`.
  void DirDeleted(const std::string& dir);

  // Puts every tracked name back to its durable state through the base file
  // system, then forgets everything (the disk is now the durable baseline).
  // Errors are from the base file system, i.e. the test's real disk.
  rocksdb::IOStatus PowerCut();

  // Names whose live state differs from their durable state.
  size_t UndurableNameCount() const;

 private:
  struct Name {
    std::shared_ptr<Inode> live;
    std::shared_ptr<Inode> durable;
  };

  Name& Track(const std::string& path);
  void SetLive(const std::string& path, Name& name,
               std::shared_ptr<Inode> inode);
  rocksdb::IOStatus DeleteIfExists(const std::string& path);
  rocksdb::IOStatus TruncateFile(const std::string& path, uint64_t size);
  // The bytes a power cut leaves in `inode`.
  rocksdb::IOStatus DurableBytes(const Inode& inode, std::string* out);

  rocksdb::FileSystem* const base_;  // Not owned; outlives this.
  std::map<std::string, Name> names_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_FAULT_FS_DURABILITY_MODEL_H_
