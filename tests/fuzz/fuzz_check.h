// Copyright (c) edge-outbox authors.
//
// FUZZ_CHECK: the fuzz targets' assertion. A broken property is a finding
// like a crash, so it aborts, and libFuzzer saves the input that broke it.

#ifndef OUTBOX_TESTS_FUZZ_FUZZ_CHECK_H_
#define OUTBOX_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

// Aborts with `what` and the failing condition unless `cond` holds. Enabled in
// every build type: NDEBUG must not turn a fuzz target into a no-op.
#define FUZZ_CHECK(cond, what)                                             \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, \
                   __LINE__, #cond, what);                                 \
      std::abort();                                                        \
    }                                                                      \
  } while (0)

#endif  // OUTBOX_TESTS_FUZZ_FUZZ_CHECK_H_
