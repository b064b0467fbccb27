// Copyright (c) edge-outbox authors.
//
// ScopedFd: owns one file descriptor and closes it when it goes, so that no
// return path of an OS call sequence leaks one (a device that runs for months
// must not run out of descriptors).

#ifndef OUTBOX_PLATFORM_SCOPED_FD_H_
#define OUTBOX_PLATFORM_SCOPED_FD_H_

#include <unistd.h>

namespace outbox {

// Movable, not copyable, like std::unique_ptr.
// REQUIRES: External synchronization.
class ScopedFd {
 public:
  ScopedFd() = default;
  // Takes ownership of `fd`; -1 (what a failed call returns) owns nothing.
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() { Reset(); }
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.Release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = other.Release();
    }
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Gives up ownership without closing; returns the descriptor.
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

  // Closes the descriptor, if any. The result of close() is not checked:
  // every descriptor this project owns is read-only or a kernel object
  // (epoll, eventfd, timerfd, socket), where close reports nothing the
  // caller could act on.
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_SCOPED_FD_H_
