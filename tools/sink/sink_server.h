// Copyright (c) edge-outbox authors.
//
// outbox-sink's HTTP(S) server: cpp-httplib wired to a Receiver.

#ifndef OUTBOX_TOOLS_SINK_SINK_SERVER_H_
#define OUTBOX_TOOLS_SINK_SINK_SERVER_H_

#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "tools/sink/receiver.h"
#include "tools/sink/sink_options.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace outbox::sink {

// Owns the listening socket. Thread-safety: Serve() blocks the calling
// thread; Stop() may be called from any other thread, once Serve() runs or
// before.
class SinkServer {
 public:
  // Creates the server (HTTPS when options.tls_cert is set) and binds it to
  // options.bind_address:options.port, so connections queue from the moment
  // this returns. POST requests and those of `methods` (GET, PUT, PATCH,
  // DELETE) go to `receiver`. REQUIRES: `receiver` outlives the SinkServer.
  // Errors: kInvalidArgument if the certificate or key cannot be loaded,
  // kUnavailable if the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<SinkServer>> Bind(
      const SinkOptions& options, const std::set<std::string>& methods,
      Receiver* receiver);
  ~SinkServer();

  // The bound port (the chosen one when options.port was 0).
  int port() const { return port_; }

  // Accepts and serves requests until Stop(). Returns false if the server
  // failed rather than being stopped.
  bool Serve();
  void Stop();

 private:
  SinkServer(std::unique_ptr<httplib::Server> server, int port);

  std::unique_ptr<httplib::Server> server_;
  int port_;
};

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_SINK_SERVER_H_
