// Copyright (c) edge-outbox authors.

#include "tests/crash/soak_cut_plan.h"

#include <iterator>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"

namespace outbox::testing {

CutPlan DrawCutPlan(std::mt19937_64* gen, bool split_batches,
                    double ops_per_cycle, double ops_per_open) {
  auto uniform = [gen](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(*gen);
  };
  CutPlan plan;
  const double draw = std::uniform_real_distribution<double>(0, 1)(*gen);
  if (draw < 0.10) return plan;  // a clean close
  if (draw < 0.62) {
    plan.kind = CutPlan::Kind::kNamed;
    std::vector<std::string> points;
    if (draw < 0.50) {
      points.assign(std::begin(kSoakNamedPoints), std::end(kSoakNamedPoints));
      if (split_batches) points.push_back(internal::kCommitBetweenSplitBatches);
    } else {
      points.assign(std::begin(kSoakWorkflowPoints),
                    std::end(kSoakWorkflowPoints));
    }
    plan.point = points[uniform(0, static_cast<int>(points.size()) - 1)];
    // Dead letters, replays, purges and reverts happen about once a cycle
    // or less: cut at their first passage, or they would hardly ever be cut.
    const bool rare = plan.point == internal::kDeadLetterBeforeWrite ||
                      plan.point == internal::kReplayBeforeWrite ||
                      plan.point == internal::kPurgeBeforeWrite ||
                      absl::StartsWith(plan.point, "workflow.revert.");
    plan.passage = rare ? 1 : uniform(1, 3);
  } else if (draw < 0.92) {
    plan.kind = CutPlan::Kind::kFileOp;
    plan.ops = uniform(0, static_cast<int>(ops_per_cycle * 1.25));
  } else {
    plan.kind = CutPlan::Kind::kInReopen;
    plan.ops = uniform(0, static_cast<int>(ops_per_open * 1.2));
  }
  return plan;
}

void ArmedCut::Arm(const CutPlan& plan) {
  absl::MutexLock l(&mu_);
  point_ = plan.kind == CutPlan::Kind::kNamed ? plan.point : "";
  passage_ = plan.passage;
  passed_ = 0;
  fired_.clear();
}

void ArmedCut::Disarm() {
  absl::MutexLock l(&mu_);
  point_.clear();
}

void ArmedCut::OnBurst() {
  absl::MutexLock l(&mu_);
  if (point_ == internal::kGroupBeforeWrite) passed_ = 0;
  in_burst_ = true;
}

void ArmedCut::OnBurstEnd() {
  absl::MutexLock l(&mu_);
  in_burst_ = false;
}

void ArmedCut::OnPoint(absl::string_view point) {
  bool hold;
  {
    absl::MutexLock l(&mu_);
    hold = in_burst_ && point == internal::kGroupBeforeWrite;
  }
  // The leader passes this point without the store's lock: while it waits,
  // the other committers queue behind it. (Not a timing assertion: how many
  // join only changes what the cut finds.)
  if (hold) absl::SleepFor(absl::Milliseconds(2));
  absl::MutexLock l(&mu_);
  auto it = passages_.find(point);
  if (it == passages_.end()) it = passages_.emplace(point, 0).first;
  ++it->second;
  if (point != point_ || ++passed_ != passage_) return;
  fired_ = point_;
  point_.clear();
  // From here on nothing reaches the disk, whatever thread writes next.
  fs_->Kill();
}

std::string ArmedCut::fired() const {
  absl::MutexLock l(&mu_);
  return fired_;
}

std::map<std::string, uint64_t> ArmedCut::passages() const {
  absl::MutexLock l(&mu_);
  return std::map<std::string, uint64_t>(passages_.begin(), passages_.end());
}

uint64_t ArmedCut::passages(absl::string_view point) const {
  absl::MutexLock l(&mu_);
  auto it = passages_.find(point);
  return it == passages_.end() ? 0 : it->second;
}

}  // namespace outbox::testing
