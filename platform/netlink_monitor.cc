// Copyright (c) edge-outbox authors.

#include "platform/netlink_monitor.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "platform/posix_error.h"

namespace outbox {
namespace {

absl::Status CannotWatch(const char* call, int error) {
  return PosixError(
      absl::StrCat("cannot watch network changes (netlink may be blocked in "
                   "this sandbox or container; connectivity will be detected "
                   "by probing instead): ",
                   call),
      error);
}

bool IsRelevant(uint16_t type) {
  switch (type) {
    case RTM_NEWLINK:
    case RTM_DELLINK:
    case RTM_NEWADDR:
    case RTM_DELADDR:
    case RTM_NEWROUTE:
    case RTM_DELROUTE:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<NetlinkMonitor>> NetlinkMonitor::Open() {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        NETLINK_ROUTE);
  if (fd < 0) return CannotWatch("socket(AF_NETLINK)", errno);
  sockaddr_nl address = {};
  address.nl_family = AF_NETLINK;
  address.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR |
                      RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    close(fd);
    return CannotWatch("bind(NETLINK_ROUTE)", error);
  }
  return std::unique_ptr<NetlinkMonitor>(new NetlinkMonitor(fd));
}

NetlinkMonitor::~NetlinkMonitor() { close(fd_); }

bool NetlinkMonitor::Drain() {
  // Notifications of these groups fit a page for ordinary interfaces; a
  // bigger one arrives truncated and is handled below.
  alignas(nlmsghdr) char buffer[8192];
  bool changed = false;
  for (;;) {
    sockaddr_nl sender = {};
    iovec iov = {buffer, sizeof(buffer)};
    msghdr message = {};
    message.msg_name = &sender;
    message.msg_namelen = sizeof(sender);
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    const ssize_t n = recvmsg(fd_, &message, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // ENOBUFS: the kernel dropped notifications for want of buffer space;
      // something changed, and later ones may still be queued.
      if (errno == ENOBUFS) {
        changed = true;
        continue;
      }
      return changed;  // EAGAIN: drained. Other errors: nothing to read.
    }
    // Only the kernel (port 0) speaks for the network: another process
    // could send to our port id.
    if (sender.nl_pid != 0) continue;
    // Every message of our groups is a link, address or route change; one
    // too big for the buffer still is, though it cannot be parsed.
    if ((message.msg_flags & MSG_TRUNC) != 0) {
      changed = true;
      continue;
    }
    int remaining = static_cast<int>(n);
    for (auto* header = reinterpret_cast<nlmsghdr*>(buffer);
         NLMSG_OK(header, remaining); header = NLMSG_NEXT(header, remaining)) {
      if (IsRelevant(header->nlmsg_type)) changed = true;
    }
  }
}

}  // namespace outbox
