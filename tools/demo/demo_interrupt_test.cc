// Copyright (c) edge-outbox authors.
//
// outbox-demo stops every process it started when it is interrupted: run
// the short story, send SIGINT (to the demo alone, not its process group, so
// that only the demo's own cleanup can stop the children) once the receiver
// is up, and check that nothing is left: every till's store opens (a
// running outbox-pos-sim would hold it) and the receiver's port refuses
// connections.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <cerrno>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "platform/child_process.h"
#include "platform/scoped_fd.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::demo {
namespace {

// The port in "... receiver up: outbox-sink on 127.0.0.1:PORT answers ...".
int PortOf(const std::string& line) {
  const std::string marker = "outbox-sink on 127.0.0.1:";
  const size_t at = line.find(marker);
  if (at == std::string::npos) return 0;
  int port = 0;
  const std::string rest = line.substr(at + marker.size());
  return absl::SimpleAtoi(rest.substr(0, rest.find(' ')), &port) ? port : 0;
}

bool Refused(int port) {
  ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr),
                 sizeof(addr)) != 0 &&
         errno == ECONNREFUSED;
}

TEST(DemoInterruptTest, SigintStopsEveryProcessItStarted) {
  testing::TempDir temp;
  const std::string dir = temp.Sub("demo");
  auto demo = ChildProcess::Start(
      {OUTBOX_DEMO_BINARY, "--short", "--dir", dir, "--offline-seconds", "2"},
      temp.Sub("demo.err"));
  ASSERT_TRUE(demo.ok()) << demo.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  std::string line;
  int port = 0;
  while (port == 0 &&
         (*demo)->ReadLine(deadline, &line) == ChildProcess::Read::kLine) {
    port = PortOf(line);
  }
  ASSERT_GT(port, 0) << "no \"receiver up\" line; last: " << line;
  ASSERT_OUTBOX_OK((*demo)->Signal(SIGINT));
  EXPECT_EQ((*demo)->Wait(absl::Now() + absl::Seconds(60)), 130);

  Options options;
  options.tables = {"sales"};
  for (int till = 1; till <= 3; ++till) {
    auto store = Store::Open(options, absl::StrCat(dir, "/till-", till, "/db"));
    EXPECT_TRUE(store.ok()) << "till-" << till << ": " << store.status();
  }
  EXPECT_TRUE(Refused(port)) << "the receiver still listens on " << port;
}

}  // namespace
}  // namespace outbox::demo
