// Copyright (c) edge-outbox authors.
//
// Soak settings from the environment: OUTBOX_SOAK_CYCLES and
// OUTBOX_SOAK_SEED.

#ifndef OUTBOX_TESTS_CRASH_SOAK_ENV_H_
#define OUTBOX_TESTS_CRASH_SOAK_ENV_H_

#include <cstdint>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"

namespace outbox::testing {

// OUTBOX_SOAK_CYCLES when set to a positive number, else `fallback`.
inline int SoakCyclesFromEnv(int fallback) {
  const char* value = std::getenv("OUTBOX_SOAK_CYCLES");
  int cycles = 0;
  if (value != nullptr && absl::SimpleAtoi(value, &cycles) && cycles > 0) {
    return cycles;
  }
  return fallback;
}

// OUTBOX_SOAK_SEED when set (to reproduce a failure), else a seed drawn from
// the time of day, so that every run explores new ground; either way the
// test prints it first thing.
inline uint64_t SoakSeedFromEnv() {
  const char* value = std::getenv("OUTBOX_SOAK_SEED");
  uint64_t seed = 0;
  if (value != nullptr && absl::SimpleAtoi(value, &seed)) return seed;
  return static_cast<uint64_t>(absl::ToUnixMicros(absl::Now()));
}

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_ENV_H_
