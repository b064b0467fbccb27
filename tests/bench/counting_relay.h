// Copyright (c) edge-outbox authors.
//
// CountingRelay: a TCP relay on loopback that forwards every connection it
// accepts to a target port, unchanged, and counts the bytes clients sent
// through it: what went over the wire above TCP (HTTP headers and bodies),
// for the wire rows (wire_rows.cc). One thread, poll(2).

#ifndef OUTBOX_TESTS_BENCH_COUNTING_RELAY_H_
#define OUTBOX_TESTS_BENCH_COUNTING_RELAY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"

namespace outbox::bench {

class CountingRelay {
 public:
  // Listens on a free loopback port and relays to 127.0.0.1:`target_port`.
  // Errors: the socket calls' (kUnavailable).
  static absl::StatusOr<std::unique_ptr<CountingRelay>> Start(int target_port);
  ~CountingRelay();  // stops the thread and closes every connection

  int port() const { return port_; }
  // Bytes clients have sent through the relay so far.
  uint64_t client_bytes() const { return client_bytes_.load(); }

 private:
  CountingRelay(int listen_fd, int port, int target_port);
  void Loop();

  const int listen_fd_;
  const int port_;
  const int target_port_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> client_bytes_{0};
  std::thread thread_;
};

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_COUNTING_RELAY_H_
