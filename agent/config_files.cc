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
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace outbox::config_files {
namespace {

constexpr size_t kMaxConfigBytes = size_t{1} << 20;
constexpr size_t kMaxSecretsBytes = size_t{64} << 10;
constexpr size_t kMaxHeaderValueBytes = size_t{8} << 10;

// "what path", or just "what" when the path is not to be shown.
std::string Named(absl::string_view what, absl::string_view shown) {
  return shown.empty() ? std::string(what) : absl::StrCat(what, " ", shown);
}

// Maps an errno from open/stat/read on a file to a status a user can act on.
// Messages name the file as `shown` ("" names it by `what` alone).
absl::Status FileError(absl::string_view what, absl::string_view shown,
                       int error) {
  const std::string name = Named(what, shown);
  const std::string message = absl::StrCat(name, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(absl::StrCat(name, " does not exist"));
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
                                    absl::string_view shown, size_t limit) {
  std::string data;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FileError(what, shown, errno);
    if (n == 0) return data;
    data.append(buffer, static_cast<size_t>(n));
    if (data.size() > limit) {
      return absl::InvalidArgumentError(absl::StrCat(
          Named(what, shown), " is larger than ", limit / 1024, " KiB"));
    }
  }
}

// Opens `path` for reading and checks it is a regular file; `*st` gets its
// metadata. fstat on the open descriptor, not stat on the name, so the mode
// checked is the mode of the file actually read. Messages name the file as
// `shown`.
absl::StatusOr<int> OpenRegular(absl::string_view what, const std::string& path,
                                absl::string_view shown, struct stat* st) {
  // O_NONBLOCK: a FIFO given as a path must fail the S_ISREG check below,
  // not block the agent's start-up in open(). Regular files ignore it.
  const int fd =
      open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return FileError(what, shown, errno);
  if (fstat(fd, st) != 0) {
    const int error = errno;
    close(fd);
    return FileError(what, shown, error);
  }
  if (!S_ISREG(st->st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(Named(what, shown), " is not a regular file"));
  }
  return fd;
}

// Reads a file that holds a secret, at most `limit` bytes. Anyone who can
// read a secret can use it, and anyone who can write it can redirect trust;
// like ssh with private keys, refuse a file that others can reach rather
// than warn about it.
absl::StatusOr<std::string> ReadPrivate(absl::string_view what,
                                        const std::string& path,
                                        absl::string_view shown, size_t limit) {
  struct stat st;
  absl::StatusOr<int> fd = OpenRegular(what, path, shown, &st);
  if (!fd.ok()) return fd.status();
  Fd closer(*fd);
  if ((st.st_mode & 077) != 0) {
    const std::string fix = shown.empty()
                                ? std::string("run chmod 600 on the file")
                                : absl::StrCat("run: chmod 600 ", shown);
    return absl::FailedPreconditionError(
        absl::StrFormat("%s is accessible to group or others (mode %04o); %s",
                        Named(what, shown), st.st_mode & 07777, fix));
  }
  return ReadAll(closer.get(), what, shown, limit);
}

}  // namespace

absl::StatusOr<std::string> ReadConfigText(const std::string& path) {
  struct stat st;
  absl::StatusOr<int> fd = OpenRegular("configuration file", path, path, &st);
  if (!fd.ok()) return fd.status();
  Fd closer(*fd);
  return ReadAll(closer.get(), "configuration file", path, kMaxConfigBytes);
}

absl::StatusOr<std::vector<WebhookSecret>> ReadSecretsFile(
    const std::string& path) {
  absl::StatusOr<std::string> text =
      ReadPrivate("secrets file", path, path, kMaxSecretsBytes);
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
  absl::StatusOr<int> fd = OpenRegular("file", path, path, &st);
  if (!fd.ok()) return fd.status();
  close(*fd);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadHeaderValueFile(const std::string& path) {
  absl::StatusOr<std::string> text =
      ReadPrivate("value file", path, /*shown=*/"", kMaxHeaderValueBytes);
  if (!text.ok()) return text.status();
  std::string value = *std::move(text);
  if (absl::EndsWith(value, "\r\n")) {
    value.resize(value.size() - 2);
  } else if (absl::EndsWith(value, "\n")) {
    value.resize(value.size() - 1);
  }
  if (value.empty()) {
    return absl::InvalidArgumentError("value file is empty");
  }
  if (absl::StrContains(value, '\r') || absl::StrContains(value, '\n') ||
      absl::StrContains(value, '\0')) {
    return absl::InvalidArgumentError(
        "value file holds more than one line (or a NUL byte); a header value "
        "is one line");
  }
  return value;
}

}  // namespace outbox::config_files
