// Copyright (c) edge-outbox authors.
//
// Skipping a test because the machine lacks something it needs (netlink,
// network namespaces, a kernel that drops SYNs on a full accept queue), in a
// way that cannot pass silently where that something must be there.

#ifndef OUTBOX_TESTS_TESTING_SKIP_H_
#define OUTBOX_TESTS_TESTING_SKIP_H_

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace outbox::testing {

// True if the environment variable OUTBOX_REQUIRE names `feature`: a comma-
// separated list of features, or "all". CI sets OUTBOX_REQUIRE=all for the
// native run (.ci/run), where every feature a test may skip for is present.
bool FeatureRequired(absl::string_view feature);

}  // namespace outbox::testing

// Skips the running test, saying which `feature` this machine lacks and
// why (ctest then reports the test as Skipped, not Passed), unless
// OUTBOX_REQUIRE names the feature: then the test fails with the same words.
// Use only in a void function of the test (it returns from it).
#define OUTBOX_SKIP_WITHOUT(feature, why)                               \
  do {                                                                  \
    if (::outbox::testing::FeatureRequired(feature)) {                  \
      GTEST_FAIL() << "required feature '" << (feature)                 \
                   << "' is missing (OUTBOX_REQUIRE): " << why;         \
    }                                                                   \
    GTEST_SKIP() << "this machine lacks '" << (feature) << "': " << why \
                 << " (set OUTBOX_REQUIRE=" << (feature)                \
                 << " to make this a failure)";                         \
  } while (false)

#endif  // OUTBOX_TESTS_TESTING_SKIP_H_
