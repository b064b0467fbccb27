// Copyright (c) edge-outbox authors.

#include "platform/posix_error.h"

#include <cerrno>

namespace outbox {

absl::StatusCode PosixErrorCode(int error_number) {
  switch (error_number) {
    case ENOENT:
      return absl::StatusCode::kNotFound;
    case EACCES:
    case EPERM:
      return absl::StatusCode::kPermissionDenied;
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case ENOBUFS:
      return absl::StatusCode::kResourceExhausted;
    case EINTR:
    case EAGAIN:  // == EWOULDBLOCK on Linux
    case EBUSY:
    case ETIMEDOUT:
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case EPIPE:
    case ENETDOWN:
    case ENETUNREACH:
    case EHOSTUNREACH:
      return absl::StatusCode::kUnavailable;
    case EIO:  // see the header: never "retry"
      return absl::StatusCode::kDataLoss;
    case EINVAL:
    case ENAMETOOLONG:
    case E2BIG:
      return absl::StatusCode::kInvalidArgument;
    case EEXIST:
      return absl::StatusCode::kAlreadyExists;
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
    case ENXIO:
    case ENOTEMPTY:
    case EROFS:
    case EXDEV:
    case ETXTBSY:
      return absl::StatusCode::kFailedPrecondition;
    case ENOSYS:
    case EOPNOTSUPP:  // == ENOTSUP on Linux
    case EAFNOSUPPORT:
    case EPROTONOSUPPORT:
      return absl::StatusCode::kUnimplemented;
    case EBADF:
    case EFAULT:
      return absl::StatusCode::kInternal;
    default:
      return absl::StatusCode::kUnknown;
  }
}

absl::Status PosixError(absl::string_view context, int error_number) {
  // absl::ErrnoToStatus writes "<context>: <strerror>" with a thread-safe
  // strerror; only its choice of code is replaced.
  const absl::Status described = absl::ErrnoToStatus(error_number, context);
  return absl::Status(PosixErrorCode(error_number), described.message());
}

}  // namespace outbox
