// Copyright (c) edge-outbox authors.
//
// Helpers for the HttpTransport tests: servers on 127.0.0.1 (cpp-httplib,
// and raw sockets for misbehaving peers), test certificates, and a loop that
// drives a transport the way the agent does, through its fd.

#ifndef OUTBOX_TESTS_TESTING_TRANSPORT_TEST_UTIL_H_
#define OUTBOX_TESTS_TESTING_TRANSPORT_TEST_UTIL_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "httplib.h"
#include "outbox/http_transport.h"
#include "tests/testing/test_certs.h"

namespace outbox::testing {

// Polls transport->fd() and calls Process() whenever it is readable, as the
// agent does, until `done()` holds. Returns false if that takes implausibly
// long (a minute): a hang guard, not a timing assertion.
bool DriveUntil(HttpTransport* transport, std::vector<HttpResult>* results,
                const std::function<bool()>& done);
// ... until `count` results have been appended to `*results`.
bool DriveUntil(HttpTransport* transport, size_t count,
                std::vector<HttpResult>* results);

// A request with the given tag and URL and short timeouts, so that a failing
// test fails in seconds rather than minutes.
HttpRequest MakeRequest(uint64_t tag, const std::string& url);

// Sends `request` through a fresh libcurl transport and returns its one
// result (an empty one, the test failed, if there is none).
HttpResult SendOne(
    const HttpRequest& request,
    const CurlTransportOptions& options = CurlTransportOptions());

// Runs `server` (handlers already registered) on 127.0.0.1 at a free port
// on a thread of its own until destroyed.
class ServerThread {
 public:
  explicit ServerThread(httplib::Server* server);
  ~ServerThread();
  ServerThread(const ServerThread&) = delete;
  ServerThread& operator=(const ServerThread&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port><path>" (or https when `tls`).
  std::string Url(const std::string& path, bool tls = false) const;

 private:
  httplib::Server* const server_;
  int port_ = -1;
  std::thread thread_;
};

// A raw TCP server on 127.0.0.1 for peers that misbehave on purpose.
class RawServer {
 public:
  enum class Mode {
    // Read the request (headers and Content-Length body), then close
    // without a byte of answer.
    kReadRequestThenClose,
    // Read the request, then write `reply` and close.
    kReadRequestThenReply,
    // Accept, then neither read nor write until destroyed.
    kSilent,
  };
  explicit RawServer(Mode mode, std::string reply = "");
  ~RawServer();
  RawServer(const RawServer&) = delete;
  RawServer& operator=(const RawServer&) = delete;

  int port() const { return port_; }
  // Connections accepted so far, in every mode.
  int connections() const { return connections_.load(); }
  int requests_read() const { return requests_read_.load(); }
  // The bytes of the last request read, headers and body.
  std::string last_request() const;

 private:
  void Serve();

  const Mode mode_;
  const std::string reply_;
  int listen_fd_ = -1;
  int port_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> requests_read_{0};
  mutable absl::Mutex mu_;
  std::string last_request_ ABSL_GUARDED_BY(mu_);
  std::vector<int> held_;  // kSilent connections, closed at destruction
  std::thread thread_;
};

// A port on 127.0.0.1 that refuses connections: bound (so nobody else takes
// it) but not listening, so the kernel answers SYN with RST.
class RefusingPort {
 public:
  RefusingPort();
  ~RefusingPort();
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = -1;
};

// A listener on 127.0.0.1 whose accept queue is full and never drained: the
// kernel drops further SYNs, so connecting hangs until the client's connect
// timeout. Returns port -1 if the queue could not be filled.
class BlackHolePort {
 public:
  BlackHolePort();
  ~BlackHolePort();
  int port() const { return port_; }

 private:
  int listen_fd_ = -1;
  int port_ = -1;
  std::vector<int> fillers_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_TRANSPORT_TEST_UTIL_H_
