// Copyright (c) edge-outbox authors.
//
// DiskServer: outbox-lossy-disk's event loop. It serves one NBD client at a
// time on a loopback port (further connections wait in the backlog: without
// NBD_FLAG_CAN_MULTI_CONN a client uses one), and takes the power-cut
// commands as signals between requests:
//   SIGUSR1          power cut: the client's connection is closed, the cache
//                    meets the cut mode, the platter is written; then a
//                    "cut ..." line on stdout says it is done and what it
//                    kept, and the next client sees the disk after the cut.
//   SIGUSR2          a "counts ..." line on stdout.
//   SIGTERM, SIGINT  a last power cut, the "cut" and "counts" lines, exit.
// Signals are taken before any pending request, so a harness that has
// killed qemu and then signals the cut loses exactly what was not durable.
// A request is read whole once started (blocking): a client that stalls
// mid-request delays the cut until it dies, which is why the harness kills
// qemu first.
// Its stdout lines (key=value, one line each, flushed at once):
//   listening 127.0.0.1:<port> size=<bytes> mode=<m> keep=<p> seed=<s>
//       honest=<0|1>
//   cut <n> mode=<m> unflushed=<block writes> kept=<k> dropped=<d>
//   counts reads=.. writes=.. fua_writes=.. flushes=.. trims=.. cuts=..
//       kept=.. dropped=.. connections=.. unflushed=<block writes now>
// REQUIRES: External synchronization (it is the program's one thread).

#ifndef OUTBOX_TESTS_VM_DISK_SERVER_H_
#define OUTBOX_TESTS_VM_DISK_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/poller.h"
#include "platform/scoped_fd.h"
#include "tests/vm/nbd_session.h"
#include "tests/vm/write_cache.h"

namespace outbox::vm {

class DiskServer {
 public:
  // Listens on 127.0.0.1:`port` (0: any free port) for a disk over `cache`,
  // which must outlive the server, and blocks the signals above.
  // Errors: PosixError codes of the sockets, signalfd and epoll.
  // A FLUSH is held `flush_latency` before it runs (NbdSession).
  static absl::StatusOr<std::unique_ptr<DiskServer>> Start(
      int port, WriteCache* cache,
      absl::Duration flush_latency = absl::ZeroDuration());

  int port() const { return port_; }

  // Prints the "listening" line, then serves until SIGTERM or SIGINT.
  // Errors: the platter's (the disk cannot go on), the poller's.
  absl::Status Run();

 private:
  DiskServer(WriteCache* cache, std::unique_ptr<Poller> poller,
             ScopedFd listener, ScopedFd signals, int port,
             absl::Duration flush_latency)
      : cache_(cache),
        flush_latency_(flush_latency),
        poller_(std::move(poller)),
        listener_(std::move(listener)),
        signals_(std::move(signals)),
        port_(port) {}

  // Handles the pending signals; false once the server must stop.
  absl::StatusOr<bool> HandleSignals();
  absl::Status Cut();
  void PrintCounts() const;
  absl::Status Accept();
  absl::Status Serve();
  // Runs the session's held FLUSH once it is due, and reads on.
  absl::Status FinishFlushIfDue();
  // Closes the client's connection, if any, and listens for the next.
  absl::Status EndSession();

  WriteCache* const cache_;
  const absl::Duration flush_latency_;
  std::unique_ptr<Poller> poller_;
  ScopedFd listener_;
  ScopedFd signals_;
  const int port_;
  std::unique_ptr<NbdSession> session_;
  uint64_t connections_ = 0;
};

}  // namespace outbox::vm

#endif  // OUTBOX_TESTS_VM_DISK_SERVER_H_
