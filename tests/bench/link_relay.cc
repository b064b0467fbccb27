// Copyright (c) edge-outbox authors.

#include "tests/bench/link_relay.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace outbox::bench {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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

bool WriteAll(int fd, const std::string& bytes) {
  for (size_t off = 0; off < bytes.size();) {
    const ssize_t w = write(fd, bytes.data() + off, bytes.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(w);
  }
  return true;
}

// Closes `fd` so that the peer gets an RST, not a FIN.
void Reset(int fd) {
  const linger hard{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
  close(fd);
}

struct Chunk {
  int64_t due_ns;
  std::string bytes;
};

}  // namespace

// One relayed connection: what each side sent, waiting for its due time.
struct LinkRelay::Pair {
  int client = -1, target = -1;
  int64_t open_ns = 0;  // the client's bytes wait for the handshake till then
  std::deque<Chunk> up, down;  // to the target, to the client
  bool client_eof = false, target_eof = false, reset = false;
};

absl::StatusOr<std::unique_ptr<LinkRelay>> LinkRelay::Start(
    const LinkOptions& options) {
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
  std::unique_ptr<LinkRelay> relay(
      new LinkRelay(fd, ntohs(a.sin_port), options));
  relay->thread_ = std::thread([r = relay.get()] { r->Loop(); });
  return relay;
}

LinkRelay::LinkRelay(int listen_fd, int port, const LinkOptions& options)
    : listen_fd_(listen_fd),
      port_(port),
      options_(options),
      draws_(options.seed * 0x9E3779B97F4A7C15ull + 1) {}

LinkRelay::~LinkRelay() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
}

void LinkRelay::Accept(std::vector<Pair>* pairs) {
  const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (client < 0) return;
  NoDelay(client);
  const int target = ConnectTo(options_.target_port);
  if (target < 0) {
    close(client);
    return;
  }
  ++connections_;
  Pair p;
  p.client = client;
  p.target = target;
  p.open_ns = NowNs() + 2 * absl::ToInt64Nanoseconds(options_.one_way_delay);
  pairs->push_back(std::move(p));
}

bool LinkRelay::Read(Pair* p, bool from_client, bool from_target) {
  const int64_t now = NowNs();
  const int64_t delay = absl::ToInt64Nanoseconds(options_.one_way_delay);
  char buf[64 << 10];
  if (from_client && !p->client_eof) {
    const ssize_t n = read(p->client, buf, sizeof(buf));
    if (n <= 0) {
      p->client_eof = !(n < 0 && errno == EINTR);
    } else {
      client_bytes_ += static_cast<uint64_t>(n);
      p->up.push_back({std::max(now, p->open_ns) + delay,
                       std::string(buf, static_cast<size_t>(n))});
    }
  }
  if (from_target && !p->target_eof) {
    const ssize_t n = read(p->target, buf, sizeof(buf));
    if (n <= 0) {
      p->target_eof = !(n < 0 && errno == EINTR);
    } else {
      // xorshift64: a reproducible draw, no locks, no global state.
      draws_ ^= draws_ << 13;
      draws_ ^= draws_ >> 7;
      draws_ ^= draws_ << 17;
      if (static_cast<double>(draws_ >> 11) * 0x1.0p-53 <
          options_.reset_probability) {
        p->reset = true;
        return false;
      }
      p->down.push_back(
          {now + delay, std::string(buf, static_cast<size_t>(n))});
    }
  }
  // A side that closed is done once what it sent has gone on.
  return !(p->client_eof && p->up.empty()) &&
         !(p->target_eof && p->down.empty());
}

bool LinkRelay::Flush(Pair* p, int64_t now) {
  while (!p->up.empty() && p->up.front().due_ns <= now) {
    if (!WriteAll(p->target, p->up.front().bytes)) return false;
    p->up.pop_front();
  }
  while (!p->down.empty() && p->down.front().due_ns <= now) {
    if (!WriteAll(p->client, p->down.front().bytes)) return false;
    p->down.pop_front();
  }
  return !(p->client_eof && p->up.empty()) &&
         !(p->target_eof && p->down.empty());
}

void LinkRelay::Loop() {
  std::vector<Pair> pairs;
  while (!stop_) {
    std::vector<pollfd> fds = {{listen_fd_, POLLIN, 0}};
    int64_t next_due = NowNs() + 50'000'000;  // look at stop_ every 50 ms
    for (const Pair& p : pairs) {
      fds.push_back(
          {p.client, static_cast<short>(p.client_eof ? 0 : POLLIN), 0});
      fds.push_back(
          {p.target, static_cast<short>(p.target_eof ? 0 : POLLIN), 0});
      if (!p.up.empty()) next_due = std::min(next_due, p.up.front().due_ns);
      if (!p.down.empty()) next_due = std::min(next_due, p.down.front().due_ns);
    }
    const int64_t wait_ns = std::max<int64_t>(next_due - NowNs(), 0);
    // poll's resolution is a millisecond: round up, never spin.
    poll(fds.data(), fds.size(),
         static_cast<int>((wait_ns + 999'999) / 1'000'000));
    std::vector<Pair> kept;
    const int64_t now = NowNs();
    for (size_t i = 0; i < pairs.size(); ++i) {
      Pair& p = pairs[i];
      const bool open =
          Read(&p, fds[1 + 2 * i].revents != 0, fds[2 + 2 * i].revents != 0) &&
          Flush(&p, now);
      if (open) {
        kept.push_back(std::move(p));
        continue;
      }
      if (p.reset) {
        ++resets_;
        Reset(p.client);
      } else {
        close(p.client);
      }
      close(p.target);
    }
    pairs.swap(kept);
    if (fds[0].revents & POLLIN) Accept(&pairs);
  }
  for (const Pair& p : pairs) {
    close(p.client);
    close(p.target);
  }
}

}  // namespace outbox::bench
