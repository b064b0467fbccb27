// Copyright (c) edge-outbox authors.

#include "tests/bench/counting_relay.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace outbox::bench {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

void NoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Connects to 127.0.0.1:`port`; -1 on failure.
int ConnectTo(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const sockaddr_in a = Loopback(port);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  NoDelay(fd);
  return fd;
}

struct Pair {
  int client = -1, target = -1;
};

// Moves what `from` has to `to`; false once either side is done.
bool Forward(int from, int to, std::atomic<uint64_t>* counted) {
  char buf[64 << 10];
  const ssize_t n = read(from, buf, sizeof(buf));
  if (n <= 0) return n < 0 && errno == EINTR;
  for (ssize_t off = 0; off < n;) {
    const ssize_t w = write(to, buf + off, static_cast<size_t>(n - off));
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += w;
  }
  if (counted != nullptr) *counted += static_cast<uint64_t>(n);
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CountingRelay>> CountingRelay::Start(
    int target_port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = Loopback(0);
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    return absl::UnavailableError(absl::StrCat("relay: ", why));
  }
  NoDelay(fd);
  std::unique_ptr<CountingRelay> relay(
      new CountingRelay(fd, ntohs(a.sin_port), target_port));
  relay->thread_ = std::thread([r = relay.get()] { r->Loop(); });
  return relay;
}

CountingRelay::CountingRelay(int listen_fd, int port, int target_port)
    : listen_fd_(listen_fd), port_(port), target_port_(target_port) {}

CountingRelay::~CountingRelay() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
}

void CountingRelay::Loop() {
  std::vector<Pair> pairs;
  while (!stop_) {
    std::vector<pollfd> fds = {{listen_fd_, POLLIN, 0}};
    for (const Pair& p : pairs) {
      fds.push_back({p.client, POLLIN, 0});
      fds.push_back({p.target, POLLIN, 0});
    }
    if (poll(fds.data(), fds.size(), 50) <= 0) continue;
    std::vector<Pair> kept;
    for (size_t i = 0; i < pairs.size(); ++i) {
      const Pair& p = pairs[i];
      const short from_client = fds[1 + 2 * i].revents;
      const short from_target = fds[2 + 2 * i].revents;
      bool open = true;
      if (from_client != 0) open = Forward(p.client, p.target, &client_bytes_);
      if (open && from_target != 0) open = Forward(p.target, p.client, nullptr);
      if (open) {
        kept.push_back(p);
      } else {
        close(p.client);
        close(p.target);
      }
    }
    pairs.swap(kept);
    if (fds[0].revents & POLLIN) {
      const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      NoDelay(client);
      const int target = ConnectTo(target_port_);
      if (target < 0) {
        close(client);
        continue;
      }
      pairs.push_back({client, target});
    }
  }
  for (const Pair& p : pairs) {
    close(p.client);
    close(p.target);
  }
}

}  // namespace outbox::bench
