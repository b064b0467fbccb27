// Copyright (c) edge-outbox authors.
//
// PosixError: the one place an errno becomes an absl::Status (LevelDB's
// util/env_posix.cc has the same helper). The code says what the caller
// does next, per the project's rules:
//
//   - ENOENT -> kNotFound: create it, or fix the name.
//   - EACCES EPERM -> kPermissionDenied: fix the mode, owner or capability;
//     a retry fails too.
//   - ENOSPC EDQUOT EFBIG -> kResourceExhausted: free disk space or quota.
//   - EMFILE ENFILE ENOMEM ENOBUFS -> kResourceExhausted: release
//     descriptors or memory; later may work.
//   - EINTR EAGAIN EBUSY ETIMEDOUT ECONNREFUSED ECONNRESET ECONNABORTED EPIPE
//     ENETDOWN ENETUNREACH EHOSTUNREACH -> kUnavailable: retry the call.
//   - EIO -> kDataLoss: check the medium; do not retry as if nothing
//     happened.
//   - EINVAL ENAMETOOLONG E2BIG -> kInvalidArgument: fix the input.
//   - EEXIST -> kAlreadyExists: use or remove what is there.
//   - ENOTDIR EISDIR ELOOP ENXIO ENOTEMPTY EROFS EXDEV ETXTBSY ->
//     kFailedPrecondition: the file system is not in the state the call
//     needs.
//   - ENOSYS EOPNOTSUPP EAFNOSUPPORT EPROTONOSUPPORT -> kUnimplemented: this
//     kernel or sandbox does not offer it; do without.
//   - EBADF EFAULT -> kInternal: a bug in the caller.
//   - anything else -> kUnknown.
//
// EIO is not kUnavailable: it is the device reporting a failed transfer. A
// read may have lost the sector for good, and after a failed fsync() Linux
// may already have dropped the dirty pages and cleared the error, so a
// retried fsync() "succeeds" with the data gone (the PostgreSQL "fsyncgate"
// of 2018). A caller told to retry would go on as if the write had landed.
//
// ETIMEDOUT is kUnavailable rather than kDeadlineExceeded: the kernel gave
// up on a connection, and the next step is the same as for a refused one.

#ifndef OUTBOX_PLATFORM_POSIX_ERROR_H_
#define OUTBOX_PLATFORM_POSIX_ERROR_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace outbox {

// The code of the table above for `error_number`.
absl::StatusCode PosixErrorCode(int error_number);

// A status with PosixErrorCode(error_number) and the message
// "<context>: <strerror(error_number)>". `context` names the call and its
// object ("open /etc/outbox/agent.textproto"); the caller keeps secrets out
// of it. Thread-safe.
absl::Status PosixError(absl::string_view context, int error_number);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_POSIX_ERROR_H_
