// Copyright (c) edge-outbox authors.
//
// Test assertions for absl::Status, in the manner of LevelDB's
// ASSERT_LEVELDB_OK: Abseil 20220623 ships no status matchers.

#ifndef OUTBOX_TESTS_TESTING_STATUS_H_
#define OUTBOX_TESTS_TESTING_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace outbox::testing {

inline const absl::Status& StatusOf(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

}  // namespace outbox::testing

// Each evaluates `expr` once (it may be a call with side effects, such as
// Store::Open) and, like GoogleTest's own macros, accepts more `<< ...`.
#define OUTBOX_STATUS_ASSERTION_(expr, assertion)                           \
  switch (0)                                                                \
  case 0:                                                                   \
  default:                                                                  \
    if (const ::absl::Status outbox_s_ = ::outbox::testing::StatusOf(expr); \
        false) {                                                            \
    } else                                                                  \
      assertion << outbox_s_
#define ASSERT_OUTBOX_OK(expr) \
  OUTBOX_STATUS_ASSERTION_(expr, ASSERT_TRUE(outbox_s_.ok()))
#define EXPECT_OUTBOX_OK(expr) \
  OUTBOX_STATUS_ASSERTION_(expr, EXPECT_TRUE(outbox_s_.ok()))
#define EXPECT_STATUS_CODE(expr, code_value) \
  OUTBOX_STATUS_ASSERTION_(expr, EXPECT_EQ(outbox_s_.code(), (code_value)))
#define ASSERT_STATUS_CODE(expr, code_value) \
  OUTBOX_STATUS_ASSERTION_(expr, ASSERT_EQ(outbox_s_.code(), (code_value)))

#endif  // OUTBOX_TESTS_TESTING_STATUS_H_
