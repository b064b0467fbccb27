// Copyright (c) edge-outbox authors.

#include "platform/reserved_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "platform/posix_error.h"

namespace outbox {

absl::StatusOr<std::unique_ptr<ReservedPort>> ReservedPort::Reserve() {
  ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return PosixError("socket", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  // Never listen(): a connect to a bound, non-listening socket is refused.
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return PosixError("bind 127.0.0.1:0", errno);
  }
  socklen_t len = sizeof(addr);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return PosixError("getsockname", errno);
  }
  return std::unique_ptr<ReservedPort>(
      new ReservedPort(std::move(fd), ntohs(addr.sin_port)));
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
