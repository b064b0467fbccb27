// Copyright (c) edge-outbox authors.

#include "platform/posix_error.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace outbox {
namespace {

struct Row {
  int error_number;
  absl::StatusCode code;
};

// The header's table, row by row.
constexpr Row kTable[] = {
    {ENOENT, absl::StatusCode::kNotFound},
    {EACCES, absl::StatusCode::kPermissionDenied},
    {EPERM, absl::StatusCode::kPermissionDenied},
    {ENOSPC, absl::StatusCode::kResourceExhausted},
    {EDQUOT, absl::StatusCode::kResourceExhausted},
    {EFBIG, absl::StatusCode::kResourceExhausted},
    {EMFILE, absl::StatusCode::kResourceExhausted},
    {ENFILE, absl::StatusCode::kResourceExhausted},
    {ENOMEM, absl::StatusCode::kResourceExhausted},
    {ENOBUFS, absl::StatusCode::kResourceExhausted},
    {EINTR, absl::StatusCode::kUnavailable},
    {EAGAIN, absl::StatusCode::kUnavailable},
    {EWOULDBLOCK, absl::StatusCode::kUnavailable},
    {EBUSY, absl::StatusCode::kUnavailable},
    {ETIMEDOUT, absl::StatusCode::kUnavailable},
    {ECONNREFUSED, absl::StatusCode::kUnavailable},
    {ECONNRESET, absl::StatusCode::kUnavailable},
    {ECONNABORTED, absl::StatusCode::kUnavailable},
    {EPIPE, absl::StatusCode::kUnavailable},
    {ENETDOWN, absl::StatusCode::kUnavailable},
    {ENETUNREACH, absl::StatusCode::kUnavailable},
    {EHOSTUNREACH, absl::StatusCode::kUnavailable},
    {EIO, absl::StatusCode::kDataLoss},
    {EINVAL, absl::StatusCode::kInvalidArgument},
    {ENAMETOOLONG, absl::StatusCode::kInvalidArgument},
    {E2BIG, absl::StatusCode::kInvalidArgument},
    {EEXIST, absl::StatusCode::kAlreadyExists},
    {ENOTDIR, absl::StatusCode::kFailedPrecondition},
    {EISDIR, absl::StatusCode::kFailedPrecondition},
    {ELOOP, absl::StatusCode::kFailedPrecondition},
    {ENXIO, absl::StatusCode::kFailedPrecondition},
    {ENOTEMPTY, absl::StatusCode::kFailedPrecondition},
    {EROFS, absl::StatusCode::kFailedPrecondition},
    {EXDEV, absl::StatusCode::kFailedPrecondition},
    {ETXTBSY, absl::StatusCode::kFailedPrecondition},
    {ENOSYS, absl::StatusCode::kUnimplemented},
    {EOPNOTSUPP, absl::StatusCode::kUnimplemented},
    {ENOTSUP, absl::StatusCode::kUnimplemented},
    {EAFNOSUPPORT, absl::StatusCode::kUnimplemented},
    {EPROTONOSUPPORT, absl::StatusCode::kUnimplemented},
    {EBADF, absl::StatusCode::kInternal},
    {EFAULT, absl::StatusCode::kInternal},
    {EDOM, absl::StatusCode::kUnknown},
    {EDEADLK, absl::StatusCode::kUnknown},
};

TEST(PosixErrorTest, EachErrnoGetsTheCodeOfItsTableRow) {
  for (const Row& row : kTable) {
    EXPECT_EQ(PosixError("call", row.error_number).code(), row.code)
        << std::strerror(row.error_number);
  }
}

TEST(PosixErrorTest, MessageIsContextThenStrerror) {
  EXPECT_EQ(PosixError("open /etc/outbox/agent.textproto", ENOENT).message(),
            std::string("open /etc/outbox/agent.textproto: ") +
                std::strerror(ENOENT));
}

}  // namespace
}  // namespace outbox
