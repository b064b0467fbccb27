// Copyright (c) edge-outbox authors.

#include "platform/reserved_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "platform/posix_error.h"

namespace outbox {

absl::StatusOr<ScopedFd> BindLoopback(int port, bool reuse_address,
                                      int* bound_port) {
  ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return PosixError("socket", errno);
  if (reuse_address) {
    const int on = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return PosixError(absl::StrCat("bind 127.0.0.1:", port), errno);
  }
  socklen_t len = sizeof(addr);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return PosixError("getsockname", errno);
  }
  *bound_port = ntohs(addr.sin_port);
  return fd;
}

absl::StatusOr<std::unique_ptr<ReservedPort>> ReservedPort::Reserve() {
  int port = 0;
  // Never listen(): a connect to a bound, non-listening socket is refused.
  absl::StatusOr<ScopedFd> fd =
      BindLoopback(/*port=*/0, /*reuse_address=*/false, &port);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<ReservedPort>(new ReservedPort(*std::move(fd), port));
}

bool LoopbackPortAccepts(int port) {
  ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return connect(fd.get(), reinterpret_cast<sockaddr*>(&addr),
                 sizeof(addr)) == 0;
}

}  // namespace outbox
