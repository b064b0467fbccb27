// Copyright (c) edge-outbox authors.

#include "tests/testing/network_namespace.h"

#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace outbox::testing {

absl::Status EnterPrivateNetworkNamespace() {
  if (unshare(CLONE_NEWNET) == 0) return absl::OkStatus();
  const int error = errno;
  const std::string message =
      absl::StrCat("unshare(CLONE_NEWNET): ", std::strerror(error),
                   " (needs CAP_SYS_ADMIN)");
  return error == EPERM ? absl::PermissionDeniedError(message)
                        : absl::UnavailableError(message);
}

absl::Status BringLoopbackUp() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("socket(AF_INET): ", std::strerror(errno)));
  }
  ifreq request = {};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  bool ok = ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  request.ifr_flags |= IFF_UP;
  ok = ok && ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  const int error = errno;
  close(fd);
  if (ok) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("SIOCSIFFLAGS(lo): ", std::strerror(error)));
}

}  // namespace outbox::testing
