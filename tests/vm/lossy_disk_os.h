// Copyright (c) edge-outbox authors.
//
// Every OS call of outbox-lossy-disk, the harness's NBD disk with a volatile
// write cache (tests/vm/README.md): the platter image file, the loopback
// listening socket and its connections, and the signals that cut the power.
// platform/ has no server sockets or positional file I/O to reuse; what it
// does have (ScopedFd, PosixError) is used here. Stateless functions are
// thread-safe; PlatterFile REQUIRES: External synchronization.

#ifndef OUTBOX_TESTS_VM_LOSSY_DISK_OS_H_
#define OUTBOX_TESTS_VM_LOSSY_DISK_OS_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/scoped_fd.h"

namespace outbox::vm {

// The platter: the image file that holds what the disk has made durable.
// The host never loses power, so the file is never fsynced: a pwrite() that
// returned is on the platter for every later reader, which is all the model
// needs.
class PlatterFile {
 public:
  // Opens an existing image for reading and writing; its size is the disk's.
  // Errors: PosixError codes of open and fstat; kFailedPrecondition if it is
  // not a regular file.
  static absl::StatusOr<std::unique_ptr<PlatterFile>> Open(
      const std::string& path);

  uint64_t size() const { return size_; }

  // Reads or writes exactly `length` bytes at `offset`.
  // REQUIRES: offset + length <= size().
  // Errors: PosixError codes of pread/pwrite; kDataLoss on a short read.
  absl::Status ReadAt(uint64_t offset, char* out, size_t length) const;
  absl::Status WriteAt(uint64_t offset, const char* data, size_t length);

 private:
  PlatterFile(ScopedFd fd, uint64_t size) : fd_(std::move(fd)), size_(size) {}

  ScopedFd fd_;
  const uint64_t size_;
};

// A TCP socket listening on 127.0.0.1:`port` (0: the kernel picks one);
// `*bound_port` receives the port. Errors: PosixError codes of socket, bind,
// listen and getsockname (kUnavailable: the port is taken).
absl::StatusOr<ScopedFd> ListenOnLoopback(int port, int* bound_port);

// Accepts one connection. Errors: PosixError codes of accept4.
absl::StatusOr<ScopedFd> AcceptConnection(int listen_fd);

// Reads exactly `length` bytes (blocking). Errors: kUnavailable if the peer
// closed the connection first (a client that was killed); PosixError codes
// of read.
absl::Status ReadExactly(int fd, char* out, size_t length);

// Writes all of `data` (blocking). Errors: PosixError codes of write
// (kUnavailable: the peer is gone).
absl::Status WriteAll(int fd, const char* data, size_t length);

// Blocks `signals` for the whole process and returns a signalfd that is
// readable while one of them is pending, so that the server's poll loop
// handles them one at a time between requests, never inside one.
// REQUIRES: called before any other thread starts.
// Errors: PosixError codes of sigprocmask and signalfd.
absl::StatusOr<ScopedFd> SignalsAsFd(std::initializer_list<int> signals);

// Takes one pending signal from `signal_fd`; 0 if none is pending.
int TakeSignal(int signal_fd);

}  // namespace outbox::vm

#endif  // OUTBOX_TESTS_VM_LOSSY_DISK_OS_H_
