// Copyright (c) edge-outbox authors.
//
// Where a power-cut soak cycle cuts the power: the plan drawn per cycle, and
// the named cut armed in the process-wide crash hook.

#ifndef OUTBOX_TESTS_CRASH_SOAK_CUT_PLAN_H_
#define OUTBOX_TESTS_CRASH_SOAK_CUT_PLAN_H_

#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "lib/crash_points.h"
#include "tests/fault_fs/fault_injection_fs.h"

namespace outbox::testing {

// The named points a soak of the correct store can reach, in data-path
// order (lib/crash_points.h): the store's and the agent's, and the
// workflow's.
inline constexpr const char* kSoakNamedPoints[] = {
    internal::kCommitBeforeWrite,    internal::kCommitAfterWrite,
    internal::kGroupBeforeWrite,     internal::kAgentBeforeSend,
    internal::kAgentAfterAnswer,     internal::kAttemptBeforeWrite,
    internal::kDeliveredBeforeWrite, internal::kDeadLetterBeforeWrite,
    internal::kReplayBeforeWrite,    internal::kPurgeBeforeWrite,
};
inline constexpr const char* kSoakWorkflowPoints[] = {
    internal::kWorkflowStepBeforeSend,    internal::kWorkflowStepAfterAnswer,
    internal::kWorkflowStepBeforeSync,    internal::kWorkflowRevertBeforeSend,
    internal::kWorkflowRevertAfterAnswer, internal::kWorkflowRevertBeforeSync,
    internal::kWorkflowMarkBeforeSync,    internal::kWorkflowCompletedWritten,
};

// Where one cycle cuts the power.
struct CutPlan {
  enum class Kind { kNone, kNamed, kFileOp, kInReopen };
  Kind kind = Kind::kNone;
  std::string point;  // kNamed: at this point's `passage`-th passage
  int passage = 1;
  uint64_t ops = 0;  // kFileOp, kInReopen: mutating calls let through first
};

// Draws the next cycle's plan: 10% a clean close, 40% one of
// kSoakNamedPoints (also kCommitBetweenSplitBatches when `split_batches`),
// 12% one of kSoakWorkflowPoints, 30% a file operation of the cycle and 8%
// one of the next reopen, drawn up to a little past the mutating operations
// an uncut cycle and a reopen make (`ops_per_cycle`, `ops_per_open`).
CutPlan DrawCutPlan(std::mt19937_64* gen, bool split_batches,
                    double ops_per_cycle, double ops_per_open);

// The named cut of the current cycle, as the crash hook sees it: OnPoint()
// kills the file system at the plan's passage of its point, on whichever
// thread passes it (the soak's, the agent's inside it, or a committer's),
// and counts every point passed.
//
// Thread-safe: the hook runs on every thread that passes a crash point.
class ArmedCut {
 public:
  // `fs` is borrowed and must outlive this.
  explicit ArmedCut(FaultInjectionFileSystem* fs) : fs_(fs) {}

  // Arms `plan` if it is kNamed, else nothing; forgets what fired before.
  void Arm(const CutPlan& plan) ABSL_LOCKS_EXCLUDED(mu_);
  void Disarm() ABSL_LOCKS_EXCLUDED(mu_);
  // Commits from several threads begin. Groups of more than one writer form
  // only there, so a cut planned at kGroupBeforeWrite and not fired yet
  // counts its passages from here. Until OnBurstEnd(), each group leader is
  // held back a moment at kGroupBeforeWrite, so that the other committers
  // queue behind it and groups of several writers form (the fault file
  // system's writes are too fast for them to form often by themselves).
  void OnBurst() ABSL_LOCKS_EXCLUDED(mu_);
  void OnBurstEnd() ABSL_LOCKS_EXCLUDED(mu_);
  // The crash hook: `point` is being passed.
  void OnPoint(absl::string_view point) ABSL_LOCKS_EXCLUDED(mu_);

  // The point that cut the power since Arm(), or "".
  std::string fired() const ABSL_LOCKS_EXCLUDED(mu_);
  // Times each point was passed, cut or not, since construction.
  std::map<std::string, uint64_t> passages() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t passages(absl::string_view point) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  FaultInjectionFileSystem* const fs_;
  mutable absl::Mutex mu_;
  std::string point_ ABSL_GUARDED_BY(mu_);  // armed; "" when not
  int passage_ ABSL_GUARDED_BY(mu_) = 0;
  int passed_ ABSL_GUARDED_BY(mu_) = 0;
  std::string fired_ ABSL_GUARDED_BY(mu_);
  bool in_burst_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, uint64_t, std::less<>> passages_ ABSL_GUARDED_BY(mu_);
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_CUT_PLAN_H_
