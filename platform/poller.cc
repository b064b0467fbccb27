// Copyright (c) edge-outbox authors.

#include "platform/poller.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "platform/posix_error.h"

namespace outbox {
namespace {

constexpr int kMaxReady = 16;

uint32_t ToEpoll(uint32_t events) {
  uint32_t out = 0;
  if (events & Poller::kReadable) out |= EPOLLIN;
  if (events & Poller::kWritable) out |= EPOLLOUT;
  return out;
}

uint32_t FromEpoll(uint32_t events) {
  uint32_t out = 0;
  if (events & EPOLLIN) out |= Poller::kReadable;
  if (events & EPOLLOUT) out |= Poller::kWritable;
  if (events & (EPOLLERR | EPOLLHUP)) out |= Poller::kError;
  return out;
}

// epoll_wait's timeout: whole milliseconds, rounded up so that a wait never
// ends before `timeout` (the caller would wake to find nothing due, and
// spin); -1 for no limit.
int TimeoutMs(absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return -1;
  if (timeout <= absl::ZeroDuration()) return 0;
  const int64_t ms =
      absl::ToInt64Milliseconds(absl::Ceil(timeout, absl::Milliseconds(1)));
  return static_cast<int>(std::min<int64_t>(ms, 24 * 3600 * 1000));
}

// Reads the 8-byte counter of an eventfd or timerfd; true if it was set.
// Non-blocking: EAGAIN means nothing was pending.
bool ReadCounter(int fd) {
  uint64_t count = 0;
  ssize_t n;
  do {
    n = read(fd, &count, sizeof(count));
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(count));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Poller>> Poller::Create() {
  ScopedFd epoll(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll.valid()) return PosixError("epoll_create1", errno);
  return std::unique_ptr<Poller>(new Poller(std::move(epoll)));
}

absl::Status Poller::Watch(int fd, uint32_t events) {
  epoll_event event = {};
  event.events = ToEpoll(events);
  event.data.fd = fd;
  // One call where the set's membership is known: curl forgets a socket
  // when its transfer ends and watches it again for the next one, and a
  // MOD tried first failed for every such watch.
  const bool member = members_.contains(fd);
  if (epoll_ctl(epoll_.get(), member ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd,
                &event) == 0) {
    members_.insert(fd);
    return absl::OkStatus();
  }
  // A member's number recycled after it was closed unforgotten (the close
  // took it out of the set): add it. EEXIST cannot happen, but would mean
  // the set holds it after all.
  const int retry = member && errno == ENOENT    ? EPOLL_CTL_ADD
                    : !member && errno == EEXIST ? EPOLL_CTL_MOD
                                                 : -1;
  if (retry >= 0 && epoll_ctl(epoll_.get(), retry, fd, &event) == 0) {
    members_.insert(fd);
    return absl::OkStatus();
  }
  const int error = errno;
  members_.erase(fd);
  return PosixError("epoll_ctl", error);
}

void Poller::Forget(int fd) {
  members_.erase(fd);
  // ENOENT/EBADF when it already left the set by being closed: fine.
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

absl::Status Poller::Wait(absl::Duration timeout, std::vector<Ready>* ready) {
  ready->clear();
  epoll_event events[kMaxReady];
  const int n = epoll_wait(epoll_.get(), events, kMaxReady, TimeoutMs(timeout));
  if (n < 0) {
    return errno == EINTR ? absl::OkStatus() : PosixError("epoll_wait", errno);
  }
  for (int i = 0; i < n; ++i) {
    ready->push_back(Ready{events[i].data.fd, FromEpoll(events[i].events)});
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Wakeup>> Wakeup::Create() {
  ScopedFd eventfd_fd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!eventfd_fd.valid()) return PosixError("eventfd", errno);
  return std::unique_ptr<Wakeup>(new Wakeup(std::move(eventfd_fd)));
}

void Wakeup::Signal() const {
  const uint64_t one = 1;
  // Async-signal-safe. It can only fail with EAGAIN, when the counter is
  // about to overflow: then the fd is readable already, which is the point.
  ssize_t ignored = write(eventfd_.get(), &one, sizeof(one));
  (void)ignored;
}

bool Wakeup::Clear() { return ReadCounter(eventfd_.get()); }

absl::StatusOr<std::unique_ptr<Timer>> Timer::Create() {
  ScopedFd timerfd(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!timerfd.valid()) return PosixError("timerfd_create", errno);
  return std::unique_ptr<Timer>(new Timer(std::move(timerfd)));
}

absl::Status Timer::Arm(absl::Duration delay) {
  if (delay == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        "Timer::Arm: an infinite delay never fires; use Disarm()");
  }
  itimerspec spec = {};
  spec.it_value = absl::ToTimespec(std::max(delay, absl::Nanoseconds(1)));
  if (timerfd_settime(timerfd_.get(), 0, &spec, nullptr) != 0) {
    return PosixError("timerfd_settime", errno);
  }
  return absl::OkStatus();
}

absl::Status Timer::Disarm() {
  const itimerspec disarmed = {};
  if (timerfd_settime(timerfd_.get(), 0, &disarmed, nullptr) != 0) {
    return PosixError("timerfd_settime", errno);
  }
  return absl::OkStatus();
}

bool Timer::Clear() { return ReadCounter(timerfd_.get()); }

}  // namespace outbox
