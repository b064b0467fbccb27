// Copyright (c) edge-outbox authors.

#include "platform/netlink_monitor.h"

#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace outbox {
namespace {

TEST(NetlinkMonitorTest, DrainWithNothingPendingReturnsFalse) {
  auto monitor = NetlinkMonitor::Open();
  if (!monitor.ok()) GTEST_SKIP() << monitor.status();
  EXPECT_GE((*monitor)->fd(), 0);
  // Subscribing raises no events of its own, and Drain() must not block.
  // (The host's network could change in this instant; it practically never
  // does on a test machine.)
  EXPECT_FALSE((*monitor)->Drain());
}

// What happened in the private network namespace.
struct NamespaceRun {
  std::string skip_reason;  // non-empty: could not run here
  bool drained_before = true;
  bool became_readable = false;
  bool drained_after = false;
};

// Brings "lo" up with SIOCSIFFLAGS: the kernel then announces the link and
// its 127.0.0.1/::1 addresses and routes.
bool BringLoopbackUp() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ifreq request = {};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  bool ok = ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  request.ifr_flags |= IFF_UP;
  ok = ok && ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  close(fd);
  return ok;
}

// Runs on a thread of its own: unshare(CLONE_NEWNET) moves only the calling
// thread into a fresh namespace, where nothing else changes the network, so
// the test sees exactly the change it makes and leaves the host alone.
void RunInPrivateNamespace(NamespaceRun* run) {
  if (unshare(CLONE_NEWNET) != 0) {
    run->skip_reason = std::string("unshare(CLONE_NEWNET): ") +
                       std::strerror(errno) + " (needs CAP_SYS_ADMIN)";
    return;
  }
  auto monitor = NetlinkMonitor::Open();
  if (!monitor.ok()) {
    run->skip_reason = std::string(monitor.status().message());
    return;
  }
  run->drained_before = (*monitor)->Drain();
  if (!BringLoopbackUp()) {
    run->skip_reason = std::string("SIOCSIFFLAGS(lo): ") + std::strerror(errno);
    return;
  }
  pollfd p = {(*monitor)->fd(), POLLIN, 0};
  run->became_readable = poll(&p, 1, 30000) == 1;  // hang guard only
  run->drained_after = (*monitor)->Drain();
}

TEST(NetlinkMonitorTest, SeesLoopbackComingUpInPrivateNamespace) {
  NamespaceRun run;
  std::thread thread(RunInPrivateNamespace, &run);
  thread.join();
  if (!run.skip_reason.empty()) GTEST_SKIP() << run.skip_reason;
  EXPECT_FALSE(run.drained_before) << "a fresh namespace reported a change";
  EXPECT_TRUE(run.became_readable);
  EXPECT_TRUE(run.drained_after);
}

}  // namespace
}  // namespace outbox
