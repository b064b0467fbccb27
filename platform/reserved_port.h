// Copyright (c) edge-outbox authors.
//
// ReservedPort: a loopback TCP port that is bound but not listening. While
// it is held, nobody else can take the port and a connection to it is
// refused (the kernel answers RST), which is exactly a receiver that is
// down; Release() frees it for the receiver to listen on. outbox-demo writes
// the tills' configuration with this port before its receiver exists.

#ifndef OUTBOX_PLATFORM_RESERVED_PORT_H_
#define OUTBOX_PLATFORM_RESERVED_PORT_H_

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "platform/scoped_fd.h"

namespace outbox {

// REQUIRES: External synchronization.
class ReservedPort {
 public:
  // Binds a TCP socket to 127.0.0.1 on a port the kernel picks.
  // Errors: PosixError codes of socket, bind and getsockname.
  static absl::StatusOr<std::unique_ptr<ReservedPort>> Reserve();

  int port() const { return port_; }

  // Closes the socket: the port is free (until someone else binds it).
  void Release() { socket_.Reset(); }

 private:
  ReservedPort(ScopedFd socket, int port)
      : socket_(std::move(socket)), port_(port) {}

  ScopedFd socket_;
  const int port_;
};

// A TCP socket bound to 127.0.0.1:`port` (0: the kernel picks one), not
// listening yet; `*bound_port` receives the port. `reuse_address` sets
// SO_REUSEADDR first, so that a server started again on its old port need
// not wait out TIME_WAIT. Errors: PosixError codes of socket, bind and
// getsockname (kUnavailable: the port is taken).
absl::StatusOr<ScopedFd> BindLoopback(int port, bool reuse_address,
                                      int* bound_port);

// True if something accepts TCP connections on 127.0.0.1:`port` now (a
// connect succeeds; the connection is closed at once). For waiting until a
// child process listens on a port it was told to use.
bool LoopbackPortAccepts(int port);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_RESERVED_PORT_H_
