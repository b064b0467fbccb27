// Copyright (c) edge-outbox authors.
//
// CellularLink: the bandwidth of an emulated cellular link, for the
// drain-time rows (drain_time_rows.cc). This kernel has no sch_netem, so
// the round trip and the resets are LinkRelay's (link_relay.h) and the
// bandwidth is tc's token bucket (tbf), inside a private network namespace
// (tests/testing/network_namespace.h) so that the host's network is never
// touched. In the namespace "lo" gets an MTU of 1500 (a cellular bearer's,
// not loopback's 64 KiB) and an htb qdisc (the kernel has no prio qdisc)
// whose classes 1:10 (packets to the relay's port: the uplink) and 1:20
// (from it: the downlink) each pass through a tbf of the link's rate;
// everything else on "lo" (the relay to the receiver) goes unshaped.
//
// REQUIRES: External synchronization. Everything that must see the link
// (the receiver's process, the relay's thread, the agent's sockets) must be
// started from the thread that called Enter(), after it.

#ifndef OUTBOX_TESTS_BENCH_CELLULAR_LINK_H_
#define OUTBOX_TESTS_BENCH_CELLULAR_LINK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace outbox::bench {

// Bytes that went through one direction's token bucket (IP packets with
// their link header, as tbf counts them against its rate), and the packets
// it dropped for want of queue.
struct ShapedBytes {
  uint64_t bytes = 0;
  uint64_t dropped = 0;
};

class CellularLink {
 public:
  // Moves the calling thread into a fresh network namespace with "lo" up
  // and its MTU 1500. `bits_per_second` is each direction's rate; `dir` a
  // directory for tc's output. Errors: kPermissionDenied without
  // CAP_SYS_ADMIN (not root); kNotFound without the tc program (iproute2);
  // kUnavailable if a tc or ip command fails (the message has its stderr).
  static absl::StatusOr<std::unique_ptr<CellularLink>> Enter(
      int64_t bits_per_second, const std::string& dir);

  // Shapes the traffic to and from `port` on "lo" (replacing what an
  // earlier call set up, and zeroing the counters). Errors: as Enter's.
  absl::Status Shape(int port);

  // What went through each direction since Shape(). Errors: as Enter's, and
  // kInternal if tc's statistics cannot be parsed.
  absl::StatusOr<ShapedBytes> Uplink() const { return Counted("10:"); }
  absl::StatusOr<ShapedBytes> Downlink() const { return Counted("20:"); }

  int64_t bits_per_second() const { return bits_per_second_; }

 private:
  CellularLink(int64_t bits_per_second, std::string dir, std::string tc,
               std::string ip)
      : bits_per_second_(bits_per_second),
        dir_(std::move(dir)),
        tc_(std::move(tc)),
        ip_(std::move(ip)) {}
  absl::StatusOr<ShapedBytes> Counted(const std::string& handle) const;
  // Runs `program args...` and returns its stdout.
  absl::StatusOr<std::string> Run(const std::string& program,
                                  const std::string& args) const;

  const int64_t bits_per_second_;
  const std::string dir_, tc_, ip_;
};

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_CELLULAR_LINK_H_
