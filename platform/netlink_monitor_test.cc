// Copyright (c) edge-outbox authors.
//
// Needs netlink sockets (feature "netlink") and, to change the network
// without touching the host's, a private network namespace (feature
// "netns", CAP_SYS_ADMIN). Where they are missing the tests skip, and say
// so; CI requires both (OUTBOX_REQUIRE, tests/testing/skip.h).

#include "platform/netlink_monitor.h"

#include <poll.h>

#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/testing/network_namespace.h"
#include "tests/testing/skip.h"

namespace outbox {
namespace {

TEST(NetlinkMonitorTest, DrainWithNothingPendingReturnsFalse) {
  auto monitor = NetlinkMonitor::Open();
  if (!monitor.ok()) OUTBOX_SKIP_WITHOUT("netlink", monitor.status());
  EXPECT_GE((*monitor)->fd(), 0);
  // Subscribing raises no events of its own, and Drain() must not block.
  // (The host's network could change in this instant; it practically never
  // does on a test machine.)
  EXPECT_FALSE((*monitor)->Drain());
}

// What happened in the private network namespace.
struct NamespaceRun {
  std::string missing;      // non-empty: the feature this machine lacks
  std::string skip_reason;  // and why
  bool drained_before = true;
  bool became_readable = false;
  bool drained_after = false;
};

// Runs on a thread of its own: unshare(CLONE_NEWNET) moves only the calling
// thread into a fresh namespace, where nothing else changes the network, so
// the test sees exactly the change it makes and leaves the host alone.
void RunInPrivateNamespace(NamespaceRun* run) {
  absl::Status entered = testing::EnterPrivateNetworkNamespace();
  if (!entered.ok()) {
    run->missing = "netns";
    run->skip_reason = std::string(entered.message());
    return;
  }
  auto monitor = NetlinkMonitor::Open();
  if (!monitor.ok()) {
    run->missing = "netlink";
    run->skip_reason = std::string(monitor.status().message());
    return;
  }
  run->drained_before = (*monitor)->Drain();
  absl::Status up = testing::BringLoopbackUp();
  if (!up.ok()) {
    run->missing = "netns";
    run->skip_reason = std::string(up.message());
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
  if (!run.missing.empty()) OUTBOX_SKIP_WITHOUT(run.missing, run.skip_reason);
  EXPECT_FALSE(run.drained_before) << "a fresh namespace reported a change";
  EXPECT_TRUE(run.became_readable);
  EXPECT_TRUE(run.drained_after);
}

}  // namespace
}  // namespace outbox
