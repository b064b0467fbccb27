// Copyright (c) edge-outbox authors.

#include "tools/sink/connection_abort.h"

#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace outbox::sink {
namespace {

// The numeric host and port of `addr`, formatted the way cpp-httplib
// formats Request::remote_addr (getnameinfo with NI_NUMERICHOST).
bool HostAndPort(const sockaddr_storage& addr, socklen_t len, std::string* host,
                 int* port) {
  char buf[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, buf,
                  sizeof(buf), nullptr, 0, NI_NUMERICHOST) != 0) {
    return false;
  }
  *host = buf;
  if (addr.ss_family == AF_INET) {
    *port = ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    *port = ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  } else {
    return false;
  }
  return true;
}

bool Matches(int fd, const std::string& remote_addr, int remote_port,
             int local_port) {
  sockaddr_storage peer{};
  socklen_t peer_len = sizeof(peer);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) {
    return false;  // Not a connected socket (a file, the listener, ...).
  }
  sockaddr_storage local{};
  socklen_t local_len = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) {
    return false;
  }
  std::string peer_host, local_host;
  int peer_port = 0, port = 0;
  return HostAndPort(peer, peer_len, &peer_host, &peer_port) &&
         HostAndPort(local, local_len, &local_host, &port) &&
         peer_port == remote_port && peer_host == remote_addr &&
         port == local_port;
}

}  // namespace

absl::Status AbortConnection(const std::string& remote_addr, int remote_port,
                             int local_port) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    return absl::NotFoundError("cannot list /proc/self/fd");
  }
  bool found = false;
  while (dirent* entry = readdir(dir)) {
    int fd = -1;
    if (!absl::SimpleAtoi(entry->d_name, &fd) || fd == dirfd(dir)) continue;
    if (Matches(fd, remote_addr, remote_port, local_port)) {
      shutdown(fd, SHUT_RDWR);
      found = true;
      break;
    }
  }
  closedir(dir);
  if (!found) {
    return absl::NotFoundError(absl::StrCat("no open connection from ",
                                            remote_addr, ":", remote_port));
  }
  return absl::OkStatus();
}

}  // namespace outbox::sink
