// Copyright (c) edge-outbox authors.

#include "lib/store_path.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/rocks_status.h"

namespace outbox {
namespace {

// True if every one of `children` is something RocksDB leaves when creating
// a database is cut off before it writes CURRENT. Any table file, non-empty
// log or other file means the directory is something else.
bool LeftByInterruptedCreate(rocksdb::Env* env, const std::string& path,
                             const std::vector<std::string>& children) {
  for (const std::string& c : children) {
    if (c == "IDENTITY" || c == "LOCK" || absl::StartsWith(c, "LOG") ||
        absl::StartsWith(c, "MANIFEST-") || absl::StartsWith(c, "OPTIONS-") ||
        absl::EndsWith(c, ".dbtmp")) {
      continue;
    }
    uint64_t size = 0;
    if (absl::EndsWith(c, ".log") &&
        env->GetFileSize(path + "/" + c, &size).ok() && size == 0) {
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ListDirectory(
    rocksdb::Env* env, const std::string& path) {
  std::vector<std::string> children;
  if (!env->FileExists(path).ok()) return children;
  rocksdb::Status s = env->GetChildren(path, &children);
  if (!s.ok()) {
    bool is_dir = false;
    if (env->IsDirectory(path, &is_dir).ok() && is_dir) {
      return FromRocks(s, absl::StrCat("listing '", path, "'"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' exists and is not a directory (",
                     s.ToString(), "); an outbox store is a directory"));
  }
  children.erase(std::remove_if(children.begin(), children.end(),
                                [](const std::string& c) {
                                  return c == "." || c == "..";
                                }),
                 children.end());
  return children;
}

absl::StatusOr<StorePath> InspectStorePath(rocksdb::Env* env,
                                           const std::string& path) {
  absl::StatusOr<std::vector<std::string>> children = ListDirectory(env, path);
  if (!children.ok()) return children.status();
  StorePath found;
  if (std::find(children->begin(), children->end(), "CURRENT") !=
      children->end()) {
    found.kind = StorePath::Kind::kDatabase;
  } else if (!children->empty()) {
    if (!LeftByInterruptedCreate(env, path, *children)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", path,
          "' is not an outbox store: it is a non-empty directory without a "
          "database in it (refusing to create a store among other files; "
          "pick an empty or new directory)"));
    }
    found.kind = StorePath::Kind::kInterruptedCreate;
    found.leftovers = *std::move(children);
  }
  return found;
}

absl::Status PrepareNewStorePath(rocksdb::Env* env, const std::string& path,
                                 const StorePath& found) {
  for (const std::string& c : found.leftovers) {
    if (c == "LOCK") continue;
    rocksdb::Status s = env->DeleteFile(path + "/" + c);
    if (!s.ok()) {
      return FromRocks(
          s, absl::StrCat("clearing the unfinished store '", path, "'"));
    }
  }
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    rocksdb::Status s = env->CreateDirIfMissing(path.substr(0, slash));
    if (!s.ok()) {
      return FromRocks(s, absl::StrCat("creating the parents of '", path, "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace outbox
