// Copyright (c) edge-outbox authors.
//
// The request log on a tty, as tests/vm's guest uses it (its second serial
// port): each line arrives whole, byte for byte, by the time Append returns.

#include "tools/sink/request_log.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "platform/scoped_fd.h"
#include "tests/testing/status.h"

namespace outbox::sink {
namespace {

// What the master side of a pty holds now (waits at most 1 s for the first
// byte).
std::string ReadAvailable(int fd) {
  std::string out;
  pollfd p{fd, POLLIN, 0};
  int timeout_ms = 1000;
  while (::poll(&p, 1, timeout_ms) == 1) {
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    timeout_ms = 0;
  }
  return out;
}

TEST(RequestLogTest, LinesReachATtyWholeWhenAppendReturns) {
  ScopedFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  ASSERT_TRUE(master.valid());
  ASSERT_EQ(::grantpt(master.get()), 0);
  ASSERT_EQ(::unlockpt(master.get()), 0);
  const std::string tty = ::ptsname(master.get());
  // Raw, as guest_init.sh sets its port: no "\r" before each "\n".
  ScopedFd slave(::open(tty.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC));
  ASSERT_TRUE(slave.valid());
  termios mode{};
  ASSERT_EQ(::tcgetattr(slave.get(), &mode), 0);
  ::cfmakeraw(&mode);
  ASSERT_EQ(::tcsetattr(slave.get(), TCSANOW, &mode), 0);

  absl::StatusOr<std::unique_ptr<RequestLog>> log = RequestLog::Open(tty);
  ASSERT_OUTBOX_OK(log);
  LogRecord record;
  record.id = "msg_1";
  record.method = "POST";
  record.path = "/";
  record.status = 200;
  record.body = std::string(2000, 'x');
  ASSERT_OUTBOX_OK((*log)->Append(record));
  EXPECT_EQ(ReadAvailable(master.get()), FormatLogLine(1, record) + "\n");
}

}  // namespace
}  // namespace outbox::sink
