// Copyright (c) edge-outbox authors.

#include "platform/reserved_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "gtest/gtest.h"
#include "platform/scoped_fd.h"

namespace outbox {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// errno of connect() to the port, 0 if it connected.
int ConnectError(int port) {
  ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_in addr = Loopback(port);
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr),
              sizeof(addr)) == 0) {
    return 0;
  }
  return errno;
}

TEST(ReservedPortTest, ConnectionsAreRefusedWhileHeld) {
  auto reserved = ReservedPort::Reserve();
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  EXPECT_GT((*reserved)->port(), 0);
  EXPECT_EQ(ConnectError((*reserved)->port()), ECONNREFUSED);
}

TEST(ReservedPortTest, OthersCannotBindUntilReleased) {
  auto reserved = ReservedPort::Reserve();
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  const sockaddr_in addr = Loopback((*reserved)->port());
  ScopedFd other(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_NE(
      bind(other.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)),
      0);
  EXPECT_EQ(errno, EADDRINUSE);
  (*reserved)->Release();
  ASSERT_EQ(
      bind(other.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)),
      0);
  ASSERT_EQ(listen(other.get(), 1), 0);
  EXPECT_EQ(ConnectError((*reserved)->port()), 0);
}

TEST(ReservedPortTest, LoopbackPortAcceptsOnlyOnceSomethingListens) {
  auto reserved = ReservedPort::Reserve();
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  const int port = (*reserved)->port();
  EXPECT_FALSE(LoopbackPortAccepts(port));
  (*reserved)->Release();
  const sockaddr_in addr = Loopback(port);
  ScopedFd listener(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr),
                 sizeof(addr)),
            0);
  EXPECT_FALSE(LoopbackPortAccepts(port));  // bound, not listening
  ASSERT_EQ(listen(listener.get(), 1), 0);
  EXPECT_TRUE(LoopbackPortAccepts(port));
}

}  // namespace
}  // namespace outbox
