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

#define ASSERT_OUTBOX_OK(expr)                        \
  ASSERT_TRUE(::outbox::testing::StatusOf(expr).ok()) \
      << ::outbox::testing::StatusOf(expr)
#define EXPECT_OUTBOX_OK(expr)                        \
  EXPECT_TRUE(::outbox::testing::StatusOf(expr).ok()) \
      << ::outbox::testing::StatusOf(expr)
#define EXPECT_STATUS_CODE(expr, code_value)                        \
  EXPECT_EQ(::outbox::testing::StatusOf(expr).code(), (code_value)) \
      << ::outbox::testing::StatusOf(expr)
#define ASSERT_STATUS_CODE(expr, code_value)                        \
  ASSERT_EQ(::outbox::testing::StatusOf(expr).code(), (code_value)) \
      << ::outbox::testing::StatusOf(expr)

#endif  // OUTBOX_TESTS_TESTING_STATUS_H_
