// Copyright (c) edge-outbox authors.
//
// LinkRelay: a TCP relay on loopback standing for the far end of a link. It
// forwards every connection it accepts to a target port and counts the
// bytes clients sent through it: what went over the wire above TCP (HTTP
// headers and bodies), for the wire rows (wire_rows.cc). For the drain-time
// rows (drain_time_rows.cc) it also holds each chunk `one_way_delay` in each
// direction (a round trip of twice that), makes a new connection wait one
// round trip before its first bytes go on (the TCP handshake a real link
// costs), and resets a connection (RST to the client) instead of passing
// on an answer, with probability `reset_probability` per answer chunk.
// Bandwidth is not its business: cellular_link.h shapes the relay's port
// with tc. One thread, poll(2). Thread-safe: the counters may be read from
// any thread.

#ifndef OUTBOX_TESTS_BENCH_LINK_RELAY_H_
#define OUTBOX_TESTS_BENCH_LINK_RELAY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace outbox::bench {

struct LinkOptions {
  int target_port = 0;  // 127.0.0.1:target_port, the receiver
  // Held in each direction; the round trip is twice this. Default: none.
  absl::Duration one_way_delay = absl::ZeroDuration();
  // Chance, per chunk the receiver answers, that the relay resets the
  // client's connection instead of forwarding it. Default: never.
  double reset_probability = 0;
  uint32_t seed = 27;  // of the reset draws
};

class LinkRelay {
 public:
  // Listens on a free loopback port and relays to the target.
  // Errors: the socket calls' (kUnavailable).
  static absl::StatusOr<std::unique_ptr<LinkRelay>> Start(
      const LinkOptions& options);
  ~LinkRelay();  // stops the thread and closes every connection

  int port() const { return port_; }
  // Bytes clients have sent through the relay so far.
  uint64_t client_bytes() const { return client_bytes_.load(); }
  uint64_t connections() const { return connections_.load(); }
  uint64_t resets() const { return resets_.load(); }

 private:
  struct Pair;
  LinkRelay(int listen_fd, int port, const LinkOptions& options);
  void Loop();
  void Accept(std::vector<Pair>* pairs);
  // Reads what either side of `p` has; false once the pair is done.
  bool Read(Pair* p, bool from_client, bool from_target);
  // Writes the chunks of `p` that are due; false if a write failed.
  bool Flush(Pair* p, int64_t now);

  const int listen_fd_;
  const int port_;
  const LinkOptions options_;
  uint64_t draws_;  // the reset draws' state (this thread only)
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> client_bytes_{0};
  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> resets_{0};
  std::thread thread_;
};

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_LINK_RELAY_H_
