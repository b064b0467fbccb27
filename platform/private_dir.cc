// Copyright (c) edge-outbox authors.

#include "platform/private_dir.h"

#include <sys/stat.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "platform/posix_error.h"

namespace outbox {
namespace {

constexpr mode_t kPrivate = 0700;

absl::Status NotADirectory(const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat("'", path, "' exists and is not a directory"));
}

}  // namespace

absl::Status MakePrivateDirectory(const std::string& path) {
  if (mkdir(path.c_str(), kPrivate) != 0 && errno != EEXIST) {
    return PosixError(absl::StrCat("cannot create directory '", path, "'"),
                      errno);
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return PosixError(absl::StrCat("cannot stat '", path, "'"), errno);
  }
  if (!S_ISDIR(st.st_mode)) return NotADirectory(path);
  if ((st.st_mode & 07777) == kPrivate) return absl::OkStatus();
  if (chmod(path.c_str(), kPrivate) != 0) {
    return PosixError(absl::StrCat("cannot chmod 700 '", path, "'"), errno);
  }
  return absl::OkStatus();
}

absl::StatusOr<unsigned> DirectoryMode(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(absl::StrCat("'", path, "' does not exist"));
    }
    return PosixError(absl::StrCat("cannot stat '", path, "'"), errno);
  }
  if (!S_ISDIR(st.st_mode)) return NotADirectory(path);
  return static_cast<unsigned>(st.st_mode & 07777);
}

absl::Status CheckDirectoryPrivate(const std::string& path,
                                   absl::string_view what) {
  absl::StatusOr<unsigned> mode = DirectoryMode(path);
  if (!mode.ok()) return mode.status();
  if ((*mode & 077) == 0) return absl::OkStatus();
  // Even search (x) alone is refused: RocksDB's file names (CURRENT,
  // MANIFEST-000001, 000004.log) are easy to guess, and its files are 0644.
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s '%s' is accessible to group or others (mode %04o), so any local "
      "user could read its events; run: chmod 700 '%s'",
      what, path, *mode, path));
}

}  // namespace outbox
