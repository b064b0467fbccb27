// Copyright (c) edge-outbox authors.

#include "tests/testing/transport_test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace outbox::testing {
namespace {

// A TCP socket bound to 127.0.0.1 at a free port; returns the fd, sets *port.
int BindLoopback(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ADD_FAILURE() << "cannot bind a loopback socket: " << errno;
    return fd;
  }
  *port = ntohs(address.sin_port);
  return fd;
}

// Reads one HTTP request (headers, then a Content-Length body) from `fd`
// into `*data`, giving up when `stop` is set or the peer closes.
bool ReadRequest(int fd, const std::atomic<bool>& stop, std::string* out) {
  std::string& data = *out;
  size_t wanted = std::string::npos;
  char buffer[4096];
  while (!stop.load() && data.size() < wanted) {
    pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) return false;
    data.append(buffer, static_cast<size_t>(n));
    const size_t end = data.find("\r\n\r\n");
    if (wanted != std::string::npos || end == std::string::npos) continue;
    size_t body = 0;
    for (absl::string_view line : absl::StrSplit(data.substr(0, end), "\r\n")) {
      if (absl::StartsWithIgnoreCase(line, "content-length:")) {
        absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(15)), &body);
      }
    }
    wanted = end + 4 + body;
  }
  return data.size() >= wanted;
}

}  // namespace

bool DriveUntil(HttpTransport* transport, std::vector<HttpResult>* results,
                const std::function<bool()>& done) {
  const absl::Time give_up = absl::Now() + absl::Minutes(1);
  while (!done()) {
    if (absl::Now() > give_up) return false;
    // Process() only when the fd says so: that is the contract under test.
    pollfd p = {transport->fd(), POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const absl::Status status = transport->Process(results);
    if (!status.ok()) ADD_FAILURE() << status;
  }
  return true;
}

bool DriveUntil(HttpTransport* transport, size_t count,
                std::vector<HttpResult>* results) {
  return DriveUntil(transport, results,
                    [&] { return results->size() >= count; });
}

HttpRequest MakeRequest(uint64_t tag, const std::string& url) {
  HttpRequest request;
  request.tag = tag;
  request.url = url;
  request.body = absl::StrCat("event ", tag);
  request.connect_timeout = absl::Seconds(10);
  request.total_timeout = absl::Seconds(20);
  return request;
}

HttpResult SendOne(const HttpRequest& request,
                   const CurlTransportOptions& options) {
  auto transport = NewCurlTransport(options);
  EXPECT_TRUE(transport.ok()) << transport.status();
  if (!transport.ok()) return HttpResult();
  const absl::Status started = (*transport)->Start(request);
  EXPECT_TRUE(started.ok()) << started;
  if (!started.ok()) return HttpResult();
  std::vector<HttpResult> results;
  EXPECT_TRUE(DriveUntil(transport->get(), 1, &results));
  return results.empty() ? HttpResult() : std::move(results[0]);
}

ServerThread::ServerThread(httplib::Server* server) : server_(server) {
  port_ = server_->bind_to_any_port("127.0.0.1");
  EXPECT_GT(port_, 0) << "cannot bind the test server";
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() is a no-op until the accept loop runs, so wait for it.
  const absl::Time give_up = absl::Now() + absl::Minutes(1);
  while (!server_->is_running() && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_TRUE(server_->is_running());
}

ServerThread::~ServerThread() {
  server_->stop();
  thread_.join();
}

std::string ServerThread::Url(const std::string& path, bool tls) const {
  return absl::StrCat(tls ? "https" : "http", "://127.0.0.1:", port_, path);
}

RawServer::RawServer(Mode mode, std::string reply)
    : mode_(mode), reply_(std::move(reply)) {
  listen_fd_ = BindLoopback(&port_);
  EXPECT_EQ(listen(listen_fd_, 16), 0);
  thread_ = std::thread([this] { Serve(); });
}

RawServer::~RawServer() {
  stop_.store(true);
  thread_.join();
  for (int fd : held_) close(fd);
  close(listen_fd_);
}

void RawServer::Serve() {
  while (!stop_.load()) {
    pollfd p = {listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    connections_.fetch_add(1);
    if (mode_ == Mode::kSilent) {
      held_.push_back(fd);
      continue;
    }
    std::string request;
    if (ReadRequest(fd, stop_, &request)) {
      {
        absl::MutexLock lock(&mu_);
        last_request_ = request;
      }
      requests_read_.fetch_add(1);
      if (mode_ == Mode::kReadRequestThenReply) {
        EXPECT_EQ(write(fd, reply_.data(), reply_.size()),
                  static_cast<ssize_t>(reply_.size()));
      }
    }
    close(fd);
  }
}

std::string RawServer::last_request() const {
  absl::MutexLock lock(&mu_);
  return last_request_;
}

RefusingPort::RefusingPort() { fd_ = BindLoopback(&port_); }
RefusingPort::~RefusingPort() { close(fd_); }

BlackHolePort::BlackHolePort() {
  int port = -1;
  listen_fd_ = BindLoopback(&port);
  // Backlog 0 admits one established connection; with it unaccepted, the
  // queue is full and the kernel drops every later SYN.
  if (listen(listen_fd_, 0) != 0) return;
  const int filler = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  fillers_.push_back(filler);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  connect(filler, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  pollfd p = {filler, POLLOUT, 0};
  int error = -1;
  socklen_t length = sizeof(error);
  if (poll(&p, 1, 5000) == 1 &&
      getsockopt(filler, SOL_SOCKET, SO_ERROR, &error, &length) == 0 &&
      error == 0) {
    port_ = port;
  }
}

BlackHolePort::~BlackHolePort() {
  for (int fd : fillers_) close(fd);
  close(listen_fd_);
}

}  // namespace outbox::testing
