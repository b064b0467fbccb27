// Copyright (c) edge-outbox authors.
//
// A private network namespace for the calling thread, where a test can
// change the network (bring "lo" up) without touching the host's, and see
// exactly the netlink notifications its own change causes.

#ifndef OUTBOX_TESTS_TESTING_NETWORK_NAMESPACE_H_
#define OUTBOX_TESTS_TESTING_NETWORK_NAMESPACE_H_

#include "absl/status/status.h"

namespace outbox::testing {

// Moves the calling thread (only) into a fresh network namespace, whose one
// interface "lo" is down. Sockets it opens afterwards belong to it.
// Errors: kPermissionDenied/kUnavailable when unshare(CLONE_NEWNET) is not
// allowed (it needs CAP_SYS_ADMIN), naming the call and errno.
absl::Status EnterPrivateNetworkNamespace();

// Brings "lo" up (SIOCSIFFLAGS): the kernel then announces the link and its
// 127.0.0.1/::1 addresses and routes over netlink.
// Errors: kUnavailable naming the failed call.
absl::Status BringLoopbackUp();

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_NETWORK_NAMESPACE_H_
