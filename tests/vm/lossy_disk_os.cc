// Copyright (c) edge-outbox authors.

#include "tests/vm/lossy_disk_os.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "platform/posix_error.h"
#include "platform/reserved_port.h"

namespace outbox::vm {

absl::StatusOr<std::unique_ptr<PlatterFile>> PlatterFile::Open(
    const std::string& path) {
  ScopedFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.valid()) return PosixError(absl::StrCat("open ", path), errno);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    return PosixError(absl::StrCat("fstat ", path), errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a regular file (want a disk image)"));
  }
  return std::unique_ptr<PlatterFile>(
      new PlatterFile(std::move(fd), static_cast<uint64_t>(st.st_size)));
}

absl::Status PlatterFile::ReadAt(uint64_t offset, char* out,
                                 size_t length) const {
  while (length > 0) {
    const ssize_t got = pread(fd_.get(), out, length, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return PosixError("pread platter", errno);
    if (got == 0) return absl::DataLossError("platter shorter than its size");
    out += got;
    offset += got;
    length -= got;
  }
  return absl::OkStatus();
}

absl::Status PlatterFile::WriteAt(uint64_t offset, const char* data,
                                  size_t length) {
  while (length > 0) {
    const ssize_t put = pwrite(fd_.get(), data, length, offset);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return PosixError("pwrite platter", errno);
    data += put;
    offset += put;
    length -= put;
  }
  return absl::OkStatus();
}

absl::StatusOr<ScopedFd> ListenOnLoopback(int port, int* bound_port) {
  // A harness that restarts the disk on its old port must not wait out
  // TIME_WAIT.
  absl::StatusOr<ScopedFd> fd =
      BindLoopback(port, /*reuse_address=*/true, bound_port);
  if (!fd.ok()) return fd.status();
  if (listen(fd->get(), 4) != 0) return PosixError("listen", errno);
  return fd;
}

absl::StatusOr<ScopedFd> AcceptConnection(int listen_fd) {
  ScopedFd fd(accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
  if (!fd.valid()) return PosixError("accept", errno);
  // Replies are small and the client waits for each: no Nagle delay.
  const int on = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  return fd;
}

absl::Status ReadExactly(int fd, char* out, size_t length) {
  while (length > 0) {
    const ssize_t got = read(fd, out, length);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return PosixError("read from client", errno);
    if (got == 0) return absl::UnavailableError("the client disconnected");
    out += got;
    length -= got;
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, const char* data, size_t length) {
  while (length > 0) {
    // MSG_NOSIGNAL: a client killed mid-reply is an error, not SIGPIPE.
    const ssize_t put = send(fd, data, length, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return PosixError("write to client", errno);
    data += put;
    length -= put;
  }
  return absl::OkStatus();
}

absl::StatusOr<ScopedFd> SignalsAsFd(std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : signals) sigaddset(&set, signal);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) {
    return PosixError("sigprocmask", errno);
  }
  ScopedFd fd(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd.valid()) return PosixError("signalfd", errno);
  return fd;
}

int TakeSignal(int signal_fd) {
  signalfd_siginfo info;
  const ssize_t got = read(signal_fd, &info, sizeof(info));
  if (got != static_cast<ssize_t>(sizeof(info))) return 0;
  return static_cast<int>(info.ssi_signo);
}

}  // namespace outbox::vm
