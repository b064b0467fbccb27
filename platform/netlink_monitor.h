// Copyright (c) edge-outbox authors.
//
// NetlinkMonitor: tells the delivery agent that the network changed (a link
// went up or down, an address or route came or went), so that it can retry
// deliveries at once instead of waiting out an offline backoff.

#ifndef OUTBOX_PLATFORM_NETLINK_MONITOR_H_
#define OUTBOX_PLATFORM_NETLINK_MONITOR_H_

#include <memory>

#include "absl/status/statusor.h"

namespace outbox {

// A non-blocking Linux rtnetlink socket subscribed to link, IPv4/IPv6
// address and IPv4/IPv6 route changes of the caller's network namespace.
//
// REQUIRES: External synchronization. Meant for the agent's one thread.
class NetlinkMonitor {
 public:
  // Opens the socket. Needs no privileges, but sandboxes and some container
  // runtimes forbid netlink sockets. Errors: the PosixError code of the
  // socket or bind call that failed (kPermissionDenied or kUnimplemented
  // where netlink is forbidden, kResourceExhausted when out of descriptors);
  // the message says why. Whatever the code, the caller can do without:
  // it detects connectivity changes by probing instead.
  static absl::StatusOr<std::unique_ptr<NetlinkMonitor>> Open();

  ~NetlinkMonitor();
  NetlinkMonitor(const NetlinkMonitor&) = delete;
  NetlinkMonitor& operator=(const NetlinkMonitor&) = delete;

  // Readable when notifications are pending; then call Drain(). Valid for
  // the life of the monitor; the caller must not read or close it.
  int fd() const { return fd_; }

  // Reads every pending notification without blocking. Returns true if any
  // of them reports a link, address or route change, or if the kernel
  // dropped notifications because the socket's buffer overflowed (something
  // changed; we cannot tell what). False when nothing relevant was pending.
  bool Drain();

 private:
  explicit NetlinkMonitor(int fd) : fd_(fd) {}

  const int fd_;
};

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_NETLINK_MONITOR_H_
