// Copyright (c) edge-outbox authors.

#include "tests/fault_fs/durability_model.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace outbox::testing {

std::string NormalizePath(const std::string& path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string DirOf(const std::string& normalized_path) {
  const size_t slash = normalized_path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return normalized_path.substr(0, slash);
}

DurabilityModel::Name& DurabilityModel::Track(const std::string& path) {
  auto it = names_.find(path);
  if (it != names_.end()) return it->second;
  Name& name = names_[path];
  // First sight of this name: whatever is on disk predates the model (or
  // survived the last power cut), so it is taken as durable, name and bytes.
  uint64_t size = 0;
  const rocksdb::IOOptions io;
  if (base_->FileExists(path, io, nullptr).ok() &&
      base_->GetFileSize(path, io, &size, nullptr).ok()) {
    auto inode = std::make_shared<Inode>();
    inode->size = size;
    inode->synced_size = size;
    inode->paths.insert(path);
    name.live = inode;
    name.durable = std::move(inode);
  }
  return name;
}

void DurabilityModel::SetLive(const std::string& path, Name& name,
                              std::shared_ptr<Inode> inode) {
  if (name.live != nullptr) name.live->paths.erase(path);
  name.live = std::move(inode);
  if (name.live != nullptr) name.live->paths.insert(path);
}

std::shared_ptr<Inode> DurabilityModel::Live(const std::string& path) {
  return Track(path).live;
}

rocksdb::IOStatus DurabilityModel::DurableBytes(const Inode& inode,
                                                std::string* out) {
  if (inode.saved.has_value()) {
    *out = *inode.saved;
    return rocksdb::IOStatus::OK();
  }
  out->clear();
  if (inode.synced_size == 0) return rocksdb::IOStatus::OK();
  if (inode.paths.empty()) {
    // PrepareUnname() saves the bytes before an inode loses its last name.
    return rocksdb::IOStatus::Corruption(
        "fault_fs: durable bytes of an unlinked file were not saved");
  }
  const std::string& path = *inode.paths.begin();
  rocksdb::IOStatus s = rocksdb::ReadFileToString(base_, path, out);
  if (!s.ok()) return s;
  if (out->size() < inode.synced_size) {
    return rocksdb::IOStatus::Corruption(
        "fault_fs: file is shorter than its synced length; was it changed "
        "behind the fault-injecting file system?",
        path);
  }
  out->resize(inode.synced_size);
  return rocksdb::IOStatus::OK();
}

rocksdb::IOStatus DurabilityModel::PrepareOverwrite(Inode& inode,
                                                    uint64_t offset) {
  // Only bytes below synced_size are durable; once saved, the copy stays
  // authoritative until the next sync, however often the file changes.
  if (offset >= inode.synced_size || inode.saved.has_value()) {
    return rocksdb::IOStatus::OK();
  }
  std::string bytes;
  rocksdb::IOStatus s = DurableBytes(inode, &bytes);
  if (s.ok()) inode.saved = std::move(bytes);
  return s;
}

rocksdb::IOStatus DurabilityModel::PrepareUnname(const std::string& path) {
  Name& name = Track(path);
  if (name.live == nullptr || name.live->paths.size() > 1) {
    return rocksdb::IOStatus::OK();
  }
  return PrepareOverwrite(*name.live, 0);
}

rocksdb::IOStatus DurabilityModel::PrepareRename(const std::string& src,
                                                 const std::string& dst) {
  const std::shared_ptr<Inode> moving = Track(src).live;
  // rename() between two names of one inode changes nothing.
  if (Track(dst).live == moving) return rocksdb::IOStatus::OK();
  return PrepareUnname(dst);
}

void DurabilityModel::PrepareLink(const std::string& src,
                                  const std::string& dst) {
  Track(src);
  Track(dst);
}

std::shared_ptr<Inode> DurabilityModel::Opened(const std::string& path,
                                               bool truncate) {
  Name& name = Track(path);
  if (name.live != nullptr) {
    // O_TRUNC keeps the inode: the cut is undone by a power cut unless the
    // file is synced (PrepareOverwrite saved the durable bytes).
    if (truncate) Truncated(*name.live, 0);
    return name.live;
  }
  SetLive(path, name, std::make_shared<Inode>());
  return name.live;
}

void DurabilityModel::Wrote(Inode& inode, uint64_t offset, uint64_t length) {
  inode.size = std::max(inode.size, offset + length);
}

void DurabilityModel::Truncated(Inode& inode, uint64_t size) {
  inode.size = size;
}

void DurabilityModel::Synced(Inode& inode) {
  inode.synced_size = inode.size;
  inode.saved.reset();
}

void DurabilityModel::Unlinked(const std::string& path) {
  SetLive(path, Track(path), nullptr);
}

void DurabilityModel::Renamed(const std::string& src, const std::string& dst) {
  Name& from = Track(src);
  Name& to = Track(dst);
  if (from.live == to.live) return;
  std::shared_ptr<Inode> moving = from.live;
  SetLive(dst, to, moving);
  SetLive(src, from, nullptr);
}

void DurabilityModel::Linked(const std::string& src, const std::string& dst) {
  SetLive(dst, Track(dst), Track(src).live);
}

void DurabilityModel::DirSynced(const std::string& dir) {
  for (auto it = names_.begin(); it != names_.end();) {
    if (DirOf(it->first) != dir) {
      ++it;
      continue;
    }
    it->second.durable = it->second.live;
    if (it->second.live == nullptr) {
      it = names_.erase(it);  // Gone for good: nothing left to restore.
    } else {
      ++it;
    }
  }
}

void DurabilityModel::DirDeleted(const std::string& dir) {
  for (auto it = names_.begin(); it != names_.end();) {
    if (DirOf(it->first) == dir) {
      it = names_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t DurabilityModel::UndurableNameCount() const {
  return static_cast<size_t>(
      std::count_if(names_.begin(), names_.end(), [](const auto& entry) {
        return entry.second.live != entry.second.durable;
      }));
}

rocksdb::IOStatus DurabilityModel::DeleteIfExists(const std::string& path) {
  const rocksdb::IOOptions io;
  if (!base_->FileExists(path, io, nullptr).ok())
    return rocksdb::IOStatus::OK();
  return base_->DeleteFile(path, io, nullptr);
}

rocksdb::IOStatus DurabilityModel::TruncateFile(const std::string& path,
                                                uint64_t size) {
  // The POSIX FileSystem has no path-level Truncate(); an open file does.
  std::unique_ptr<rocksdb::FSWritableFile> file;
  rocksdb::IOStatus s =
      base_->ReopenWritableFile(path, rocksdb::FileOptions(), &file, nullptr);
  if (!s.ok()) return s;
  const rocksdb::IOOptions io;
  s = file->Truncate(size, io, nullptr);
  rocksdb::IOStatus closed = file->Close(io, nullptr);
  return s.ok() ? closed : s;
}

rocksdb::IOStatus DurabilityModel::PowerCut() {
  // Plan everything first, reading every durable byte we need while the
  // disk still holds the live state: restoring one name may delete or cut
  // the very file another name's durable bytes are read from.
  std::vector<std::string> deletes;
  std::vector<std::pair<std::string, uint64_t>> truncates;
  std::vector<std::pair<std::string, std::string>> rewrites;
  for (const auto& [path, name] : names_) {
    if (name.durable == nullptr) {
      if (name.live != nullptr) deletes.push_back(path);
      continue;
    }
    const Inode& durable = *name.durable;
    if (name.live == name.durable && !durable.saved.has_value()) {
      // Cut even when the model sees no unsynced tail: a failed Append may
      // have left part of its bytes on disk.
      truncates.emplace_back(path, durable.synced_size);
      continue;
    }
    std::string bytes;
    rocksdb::IOStatus s = DurableBytes(durable, &bytes);
    if (!s.ok()) return s;
    rewrites.emplace_back(path, std::move(bytes));
  }

  for (const std::string& path : deletes) {
    rocksdb::IOStatus s = DeleteIfExists(path);
    if (!s.ok()) return s;
  }
  for (const auto& [path, bytes] : rewrites) {
    // A fresh file, not a write through the old one: the old inode may
    // still be the durable file of another name (a hard link).
    rocksdb::IOStatus s = DeleteIfExists(path);
    if (!s.ok()) return s;
    // Unsynced: the simulation, not the test machine's disk, decides what
    // is durable.
    s = rocksdb::WriteStringToFile(base_, bytes, path, /*should_sync=*/false);
    if (!s.ok()) return s;
  }
  for (const auto& [path, size] : truncates) {
    rocksdb::IOStatus s = TruncateFile(path, size);
    if (!s.ok()) return s;
  }
  names_.clear();
  return rocksdb::IOStatus::OK();
}

}  // namespace outbox::testing
