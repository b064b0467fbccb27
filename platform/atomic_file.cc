// Copyright (c) edge-outbox authors.

#include "platform/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "platform/posix_error.h"
#include "platform/scoped_fd.h"

namespace outbox {
namespace {

absl::Status WriteAll(int fd, absl::string_view content) {
  while (!content.empty()) {
    const ssize_t n = write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return PosixError("write", errno);
    content.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view content) {
  // Same directory, so rename() stays within one file system; a name that
  // does not end in ".prom", so node_exporter never reads it half written.
  const std::string tmp = absl::StrCat(path, ".tmp");
  absl::Status s;
  {
    ScopedFd fd(
        open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) return PosixError(absl::StrCat("creating ", tmp), errno);
    s = WriteAll(fd.get(), content);
    // close() can report a failed write-back (NFS, quota): check it.
    if (s.ok() && close(fd.Release()) != 0) s = PosixError("close", errno);
  }
  if (s.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    s = PosixError("rename", errno);
  }
  if (s.ok()) return s;
  unlink(tmp.c_str());
  return absl::Status(s.code(),
                      absl::StrCat("writing ", path, ": ", s.message()));
}

absl::Status CheckDirectoryWritable(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("directory ", dir, " does not exist"));
    }
    return PosixError(absl::StrCat("directory ", dir), errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, " is not a directory"));
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return PosixError(absl::StrCat("directory ", dir), errno);
  }
  return absl::OkStatus();
}

}  // namespace outbox
