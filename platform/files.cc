// Copyright (c) edge-outbox authors.

#include "platform/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "platform/posix_error.h"
#include "platform/scoped_fd.h"

namespace outbox {
namespace {

// "<what> <path>", or "<what>" when the path is not to be shown.
std::string Name(const std::string& path, const ReadFileOptions& options) {
  return options.show_path ? absl::StrCat(options.what, " ", path)
                           : options.what;
}

// A missing file is the commonest mistake: say so plainly.
absl::Status FileError(const std::string& path, const ReadFileOptions& options,
                       int error_number) {
  if (error_number == ENOENT) {
    return absl::NotFoundError(
        absl::StrCat(Name(path, options), " does not exist"));
  }
  return PosixError(Name(path, options), error_number);
}

// Opens `path` with `flags` added to O_RDONLY | O_CLOEXEC | O_NONBLOCK and
// fstat-s the descriptor into `*st`. O_NONBLOCK: a FIFO must fail the type
// check that follows, not block open() until a writer comes. Regular files
// and directories ignore it.
absl::StatusOr<ScopedFd> OpenAndStat(const std::string& path, int flags,
                                     const ReadFileOptions& options,
                                     struct stat* st) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags));
  if (!fd.valid()) return FileError(path, options, errno);
  if (fstat(fd.get(), st) != 0) return FileError(path, options, errno);
  return fd;
}

// Opens `path` and checks it is a regular file, private if it must be.
absl::StatusOr<ScopedFd> OpenRegular(const std::string& path,
                                     const ReadFileOptions& options) {
  struct stat st;
  absl::StatusOr<ScopedFd> fd = OpenAndStat(path, O_NOCTTY, options, &st);
  if (!fd.ok()) return fd.status();
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(Name(path, options), " is not a regular file"));
  }
  if (options.require_private && (st.st_mode & 077) != 0) {
    const std::string fix = options.show_path
                                ? absl::StrCat("run: chmod 600 ", path)
                                : std::string("run chmod 600 on the file");
    return absl::FailedPreconditionError(
        absl::StrFormat("%s is accessible to group or others (mode %04o); %s",
                        Name(path, options), st.st_mode & 07777, fix));
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::string> ReadFileChecked(const std::string& path,
                                            const ReadFileOptions& options) {
  absl::StatusOr<ScopedFd> fd = OpenRegular(path, options);
  if (!fd.ok()) return fd.status();
  std::string data;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fd->get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FileError(path, options, errno);
    if (n == 0) return data;
    data.append(buffer, static_cast<size_t>(n));
    // Checked as it grows: the size fstat reports can change before the
    // read, and is 0 for files such as those of /proc.
    if (data.size() > options.max_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(Name(path, options), " is larger than ",
                       options.max_bytes / 1024, " KiB"));
    }
  }
}

absl::Status CheckFileReadable(const std::string& path,
                               const ReadFileOptions& options) {
  return OpenRegular(path, options).status();
}

absl::Status CheckDirectoryReadable(const std::string& path,
                                    const ReadFileOptions& options) {
  struct stat st;
  return OpenAndStat(path, O_DIRECTORY, options, &st).status();
}

}  // namespace outbox
