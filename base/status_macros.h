// Copyright (c) edge-outbox authors.
//
// Internal helpers for propagating absl::Status. Abseil 20220623 has no
// ABSL_RETURN_IF_ERROR; these two are all the project uses.

#ifndef OUTBOX_BASE_STATUS_MACROS_H_
#define OUTBOX_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define OUTBOX_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status outbox_status_ = (expr);          \
    if (!outbox_status_.ok()) return outbox_status_; \
  } while (0)

#define OUTBOX_CONCAT_INNER_(a, b) a##b
#define OUTBOX_CONCAT_(a, b) OUTBOX_CONCAT_INNER_(a, b)

// `lhs` = the value of `rexpr` (an absl::StatusOr<T>), or returns its status.
//   OUTBOX_ASSIGN_OR_RETURN(auto entry, DecodeEntry(key, value));
#define OUTBOX_ASSIGN_OR_RETURN(lhs, rexpr)                                 \
  OUTBOX_ASSIGN_OR_RETURN_IMPL_(OUTBOX_CONCAT_(outbox_statusor_, __LINE__), \
                                lhs, rexpr)
#define OUTBOX_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return statusor.status();             \
  lhs = std::move(*statusor)

#endif  // OUTBOX_BASE_STATUS_MACROS_H_
