// Copyright (c) edge-outbox authors.

#include "tools/sink/sink_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/sink/connection_abort.h"

namespace outbox::sink {
namespace {

std::optional<std::string> HeaderOf(const httplib::Request& req,
                                    const std::string& name) {
  if (!req.has_header(name)) return std::nullopt;
  return req.get_header_value(name);
}

// cpp-httplib inflates a gzip request body itself when it was built with
// zlib (Debian's is, and so is the one the fully static builds compile), and
// leaves any other coding to the handler.
#ifdef CPPHTTPLIB_ZLIB_SUPPORT
constexpr bool kHttplibInflatesGzip = true;
#else
constexpr bool kHttplibInflatesGzip = false;
#endif

IncomingRequest FromHttp(const httplib::Request& req,
                         const std::string& type_header) {
  IncomingRequest in;
  in.method = req.method;
  in.path = req.path;
  in.raw_path = req.target.substr(0, req.target.find('?'));
  in.body = req.body;
  in.webhook_id = HeaderOf(req, "webhook-id");
  in.webhook_timestamp = HeaderOf(req, "webhook-timestamp");
  in.webhook_signature = HeaderOf(req, "webhook-signature");
  in.idempotency_key = HeaderOf(req, "Idempotency-Key");
  in.content_type = HeaderOf(req, "Content-Type");
  in.event_type = HeaderOf(req, type_header);
  in.event_ids = HeaderOf(req, "outbox-event-ids");
  in.batch_size = HeaderOf(req, "outbox-batch-size");
  in.content_encoding = HeaderOf(req, "Content-Encoding");
  return in;
}

// Clients that keep many connections alive at once (the agent with 16 in
// flight, a load generator) must not wait on the receiver. Returns where
// the listening socket will be recorded, for RaiseBacklog.
std::shared_ptr<int> ServeManyClients(httplib::Server* server) {
  // Answer at once: with Nagle's algorithm on, a small answer written in
  // two pieces waits for the client's delayed ACK (~40 ms per request).
  // Accepted sockets inherit TCP_NODELAY from the listening one.
  server->set_tcp_nodelay(true);
  // A keep-alive connection holds a worker thread for as long as it stays
  // open; with fewer workers than open connections (httplib's default is 8)
  // a request on a waiting connection stalls until a served one has been
  // idle for its keep-alive timeout (5 s).
  server->new_task_queue = [] { return new httplib::ThreadPool(64); };
  // httplib's default closes a connection after 5 requests, so a client
  // reconnects (a handshake through the backlog below) every 5 requests.
  server->set_keep_alive_max_count(100000);
  auto listen_fd = std::make_shared<int>(-1);
  server->set_socket_options([listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    *listen_fd = sock;
  });
  return listen_fd;
}

// httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, compiled
// into Debian's library): 16 connections opened at once overflow it, and
// each dropped SYN costs the client a 1 s retransmission. Linux lets a
// second listen() on a listening socket change its backlog.
absl::Status RaiseBacklog(int listen_fd) {
  if (listen_fd < 0 || ::listen(listen_fd, SOMAXCONN) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot raise the listen backlog: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

SinkServer::SinkServer(std::unique_ptr<httplib::Server> server, int port)
    : server_(std::move(server)), port_(port) {}

SinkServer::~SinkServer() = default;

absl::StatusOr<std::unique_ptr<SinkServer>> SinkServer::Bind(
    const SinkOptions& options, const std::set<std::string>& methods,
    Receiver* receiver) {
  std::unique_ptr<httplib::Server> server;
  if (!options.tls_cert.empty()) {
    auto tls = std::make_unique<httplib::SSLServer>(options.tls_cert.c_str(),
                                                    options.tls_key.c_str());
    if (!tls->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot load --tls-cert ", options.tls_cert, " / --tls-key ",
          options.tls_key, " (want a PEM certificate and its private key)"));
    }
    server = std::move(tls);
  } else {
    server = std::make_unique<httplib::Server>();
  }
  const std::shared_ptr<int> listen_fd = ServeManyClients(server.get());

  const std::string type_header = options.faults.type_header;
  const absl::Duration delay = options.faults.delay;
  const httplib::Server::Handler handler = [receiver, type_header, delay](
                                               const httplib::Request& req,
                                               httplib::Response& res) {
    IncomingRequest in = FromHttp(req, type_header);
    const std::optional<Reply> refused =
        DecodeContent(&in, /*gzip_decoded=*/kHttplibInflatesGzip);
    const Reply reply =
        refused.has_value() ? *refused : receiver->Handle(in, absl::Now());
    if (delay > absl::ZeroDuration()) absl::SleepFor(delay);
    if (reply.drop) {
      // httplib still writes a response after we return, but into a
      // socket that is shut down: the client gets EOF and no status.
      absl::Status aborted =
          AbortConnection(req.remote_addr, req.remote_port, req.local_port);
      if (!aborted.ok()) {
        std::fprintf(stderr, "outbox-sink: drop failed: %s\n",
                     aborted.ToString().c_str());
      }
      return;
    }
    res.status = reply.status;
    if (reply.retry_after.has_value()) {
      res.set_header("Retry-After", *reply.retry_after);
    }
    res.set_content(reply.body, reply.content_type.c_str());
  };
  // POST always (any path); the other methods only for the routes that use
  // them, so that the rest still get httplib's 404.
  server->Post(".*", handler);
  for (const std::string& method : methods) {
    if (method == "GET") server->Get(".*", handler);
    if (method == "PUT") server->Put(".*", handler);
    if (method == "PATCH") server->Patch(".*", handler);
    if (method == "DELETE") server->Delete(".*", handler);
  }

  int port = -1;
  if (options.port == 0) {
    port = server->bind_to_any_port(options.bind_address);
  } else if (server->bind_to_port(options.bind_address, options.port)) {
    port = options.port;
  }
  if (port <= 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", options.bind_address, ":", options.port,
        " (port in use, or not an address of this machine)"));
  }
  absl::Status backlog = RaiseBacklog(*listen_fd);
  if (!backlog.ok()) return backlog;
  return std::unique_ptr<SinkServer>(new SinkServer(std::move(server), port));
}

bool SinkServer::Serve() { return server_->listen_after_bind(); }

void SinkServer::Stop() { server_->stop(); }

}  // namespace outbox::sink
