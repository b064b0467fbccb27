// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_TOOLS_SINK_CONNECTION_ABORT_H_
#define OUTBOX_TOOLS_SINK_CONNECTION_ABORT_H_

#include <string>

#include "absl/status/status.h"

namespace outbox::sink {

// Shuts down (both directions) this process's TCP connection whose peer is
// remote_addr:remote_port and whose local port is local_port, so whatever
// the HTTP server writes next goes nowhere and the client sees the
// connection end with no response.
//
// Why a search: cpp-httplib 0.11 gives a handler the request's addresses but
// not its socket. The accepted sockets are found through /proc/self/fd and
// matched on getpeername/getsockname; the remote address and port identify
// one connection to our listening port. Linux only, as the sink is.
// Errors: kNotFound if no such connection is open.
absl::Status AbortConnection(const std::string& remote_addr, int remote_port,
                             int local_port);

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_CONNECTION_ABORT_H_
