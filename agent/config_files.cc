// Copyright (c) edge-outbox authors.

#include "agent/config_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace outbox::config_files {
namespace {

constexpr size_t kMaxConfigBytes = size_t{1} << 20;
constexpr size_t kMaxSecretsBytes = size_t{64} << 10;

// Maps an errno from open/stat/read on `path` to a status a user can act on.
absl::Status FileError(absl::string_view what, const std::string& path,
                       int error) {
  const std::string message =
      absl::StrCat(what, " ", path, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(
          absl::StrCat(what, " ", path, " does not exist"));
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    default:
      return absl::FailedPreconditionError(message);
  }
}

// Closes the descriptor on every return path.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads all of `fd`, failing past `limit` bytes rather than reading a file
// that is clearly not what it should be into memory.
absl::StatusOr<std::string> ReadAll(int fd, absl::string_view what,
                                    const std::string& path, size_t limit) {
  std::string data;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FileError(what, path, errno);
    if (n == 0) return data;
    data.append(buffer, static_cast<size_t>(n));
    if (data.size() > limit) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " ", path, " is larger than ", limit / 1024, " KiB"));
    }
  }
}

// Opens `path` for reading and checks it is a regular file; `*st` gets its
// metadata. fstat on the open descriptor, not stat on the name, so the mode
// checked is the mode of the file actually read.
absl::StatusOr<int> OpenRegular(absl::string_view what, const std::string& path,
                                struct stat* st) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileError(what, path, errno);
  if (fstat(fd, st) != 0) {
    const int error = errno;
    close(fd);
    return FileError(what, path, error);
  }
  if (!S_ISREG(st->st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(what, " ", path, " is not a regular file"));
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::string> ReadConfigText(const std::string& path) {
  struct stat st;
  absl::StatusOr<int> fd = OpenRegular("configuration file", path, &st);
  if (!fd.ok()) return fd.status();
  Fd closer(*fd);
  return ReadAll(closer.get(), "configuration file", path, kMaxConfigBytes);
}

absl::StatusOr<std::vector<WebhookSecret>> ReadSecretsFile(
    const std::string& path) {
  struct stat st;
  absl::StatusOr<int> fd = OpenRegular("secrets file", path, &st);
  if (!fd.ok()) return fd.status();
  Fd closer(*fd);
  // Anyone who can read a secret can forge deliveries, and anyone who can
  // write it can redirect trust; like ssh with private keys, refuse to use a
  // secret that others can reach rather than warn about it.
  if ((st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "secrets file %s is accessible to group or others (mode %04o); "
        "run: chmod 600 %s",
        path, st.st_mode & 07777, path));
  }
  absl::StatusOr<std::string> text =
      ReadAll(closer.get(), "secrets file", path, kMaxSecretsBytes);
  if (!text.ok()) return text.status();

  std::vector<WebhookSecret> secrets;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    absl::StatusOr<WebhookSecret> secret = ParseWebhookSecret(line);
    if (!secret.ok()) {
      // ParseWebhookSecret's messages never contain the text they reject.
      return absl::InvalidArgumentError(
          absl::StrCat("secrets file ", path, " line ", line_number, ": ",
                       secret.status().message()));
    }
    secrets.push_back(*std::move(secret));
  }
  if (secrets.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "secrets file ", path,
        " holds no secret; write one \"whsec_<base64>\" per line"));
  }
  return secrets;
}

absl::Status CheckReadable(const std::string& path, bool directory) {
  if (directory) {
    DIR* dir = opendir(path.c_str());
    if (dir == nullptr) return FileError("directory", path, errno);
    closedir(dir);
    return absl::OkStatus();
  }
  struct stat st;
  absl::StatusOr<int> fd = OpenRegular("file", path, &st);
  if (!fd.ok()) return fd.status();
  close(*fd);
  return absl::OkStatus();
}

}  // namespace outbox::config_files
