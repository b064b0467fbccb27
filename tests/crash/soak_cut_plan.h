// Copyright (c) edge-outbox authors.
//
// Where a power-cut soak cycle cuts the power: the plan drawn per cycle.

#ifndef OUTBOX_TESTS_CRASH_SOAK_CUT_PLAN_H_
#define OUTBOX_TESTS_CRASH_SOAK_CUT_PLAN_H_

#include <cstdint>
#include <random>
#include <string>

#include "lib/crash_points.h"

namespace outbox::testing {

// The named points a soak of the correct store can reach, in data-path
// order (lib/crash_points.h).
inline constexpr const char* kSoakNamedPoints[] = {
    internal::kCommitBeforeWrite,     internal::kCommitAfterWrite,
    internal::kAgentBeforeSend,       internal::kAgentAfterAnswer,
    internal::kAttemptBeforeWrite,    internal::kDeliveredBeforeWrite,
    internal::kDeadLetterBeforeWrite, internal::kReplayBeforeWrite,
    internal::kPurgeBeforeWrite,
};

// Where one cycle cuts the power.
struct CutPlan {
  enum class Kind { kNone, kNamed, kFileOp, kInReopen };
  Kind kind = Kind::kNone;
  std::string point;  // kNamed: at this point's `passage`-th passage
  int passage = 1;
  uint64_t ops = 0;  // kFileOp, kInReopen: mutating calls let through first
};

// Draws the next cycle's plan: 10% a clean close, 45% a named point (also
// kCommitBetweenSplitBatches when `split_batches`), 35% a file operation of
// the cycle and 10% one of the next reopen, drawn up to a little past the
// mutating operations an uncut cycle and a reopen make (`ops_per_cycle`,
// `ops_per_open`).
CutPlan DrawCutPlan(std::mt19937_64* gen, bool split_batches,
                    double ops_per_cycle, double ops_per_open);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_CUT_PLAN_H_
