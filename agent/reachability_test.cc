// Copyright (c) edge-outbox authors.
//
// Reachability: one probe at a time for an unreachable or refusing
// destination, its interval doubling from the minimum to the maximum, at
// once after a network change, and everything open again on the first
// answer (of another kind than a refusal).

#include "agent/reachability.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

constexpr absl::Duration kMin = absl::Seconds(1);
constexpr absl::Duration kMax = absl::Seconds(30);
const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(10);

class ReachabilityTest : public ::testing::Test {
 protected:
  LaneGate GateAt(absl::Time now) {
    absl::flat_hash_set<std::string> probing;
    return r_.Gate("backend", now, &probing);
  }
  // A probe goes out at `now` and fails; returns when the next one is due.
  absl::Time FailedProbe(absl::Time now) {
    EXPECT_EQ(GateAt(now), LaneGate::kOne);
    EXPECT_TRUE(r_.OnSend("backend"));
    r_.OnResult("backend", /*probe=*/true);
    r_.OnNeverReached("backend", /*probe=*/true, now);
    return r_.NextProbe();
  }

  Reachability r_{{"backend", "audit"}, kMin, kMax};
};

TEST_F(ReachabilityTest, ReachableDestinationIsOpen) {
  EXPECT_EQ(GateAt(kT0), LaneGate::kOpen);
  EXPECT_FALSE(r_.OnSend("backend"));  // not a probe
}

TEST_F(ReachabilityTest, NeverReachedClosesUntilTheFirstProbe) {
  EXPECT_TRUE(r_.OnNeverReached("backend", /*probe=*/false, kT0));
  EXPECT_EQ(GateAt(kT0), LaneGate::kClosed);
  EXPECT_EQ(r_.NextProbe(), kT0 + kMin);
  EXPECT_EQ(GateAt(kT0 + kMin), LaneGate::kOne);
}

TEST_F(ReachabilityTest, OneProbeAtATime) {
  r_.OnNeverReached("backend", false, kT0);
  absl::flat_hash_set<std::string> probing;
  EXPECT_EQ(r_.Gate("backend", kT0 + kMin, &probing), LaneGate::kOne);
  // A second lane of the same destination in the same round gets nothing.
  EXPECT_EQ(r_.Gate("backend", kT0 + kMin, &probing), LaneGate::kClosed);
  EXPECT_TRUE(r_.OnSend("backend"));
  // While the probe is out, nothing more, however late it gets.
  EXPECT_EQ(GateAt(kT0 + absl::Hours(1)), LaneGate::kClosed);
  EXPECT_EQ(r_.NextProbe(), absl::InfiniteFuture());
}

// (An untargeted workflow lane peeks: the plan of one of its events, not
// the lane, takes the probe of the destination it needs.)
TEST_F(ReachabilityTest, PeekGivesNoProbeAway) {
  r_.OnNeverReached("backend", false, kT0);
  absl::flat_hash_set<std::string> probing;
  EXPECT_EQ(r_.Peek("backend", kT0, probing), LaneGate::kClosed);
  EXPECT_EQ(r_.Peek("backend", kT0 + kMin, probing), LaneGate::kOne);
  EXPECT_EQ(r_.Peek("backend", kT0 + kMin, probing), LaneGate::kOne);
  EXPECT_EQ(r_.Peek("audit", kT0, probing), LaneGate::kOpen);
  EXPECT_EQ(r_.Gate("backend", kT0 + kMin, &probing), LaneGate::kOne);
  EXPECT_EQ(r_.Peek("backend", kT0 + kMin, probing), LaneGate::kClosed);
  EXPECT_FALSE(r_.Knows("elsewhere"));
  EXPECT_EQ(r_.Peek("elsewhere", kT0, probing), LaneGate::kClosed);
}

TEST_F(ReachabilityTest, FailedProbesDoubleTheIntervalUpToTheMaximum) {
  r_.OnNeverReached("backend", false, kT0);
  absl::Time at = kT0 + kMin;
  absl::Duration expected = kMin;
  for (int i = 0; i < 8; ++i) {
    expected = std::min(expected * 2, kMax);
    const absl::Time next = FailedProbe(at);
    EXPECT_EQ(next - at, expected) << "probe " << i;
    at = next;
  }
}

TEST_F(ReachabilityTest, NetworkChangeProbesAtOnceThenBacksOffAgain) {
  r_.OnNeverReached("backend", false, kT0);
  const absl::Time later = FailedProbe(kT0 + kMin);
  r_.OnNetworkChange();
  EXPECT_EQ(GateAt(kT0 + kMin), LaneGate::kOne);  // not waiting for `later`
  EXPECT_LT(kT0 + kMin, later);
  // The probe after the change fails: it waits again instead of looping.
  EXPECT_EQ(FailedProbe(kT0 + kMin), kT0 + kMin + kMin);
}

TEST_F(ReachabilityTest, AnyAnswerOpensTheDestination) {
  r_.OnNeverReached("backend", false, kT0);
  EXPECT_TRUE(r_.OnAnswer("backend", kT0));
  EXPECT_EQ(GateAt(kT0), LaneGate::kOpen);
  EXPECT_FALSE(r_.OnAnswer("backend", kT0));
}

// A refusal of the device (401, 403, not authorized) holds the destination
// as an unreachable one is held: closed, then one probe at a time, its
// interval doubling from the minimum to the maximum (docs/operations.md,
// "Wrong clocks and refused credentials").
TEST_F(ReachabilityTest, RefusedProbesDoubleTheIntervalUpToTheMaximum) {
  EXPECT_TRUE(r_.OnRefused("backend", /*probe=*/false, kT0));
  EXPECT_EQ(GateAt(kT0), LaneGate::kClosed);
  absl::Time at = kT0 + kMin;
  EXPECT_EQ(r_.NextProbe(), at);
  absl::Duration expected = kMin;
  for (int i = 0; i < 8; ++i) {
    expected = std::min(expected * 2, kMax);
    ASSERT_EQ(GateAt(at), LaneGate::kOne) << "probe " << i;
    ASSERT_TRUE(r_.OnSend("backend"));
    r_.OnResult("backend", /*probe=*/true);
    EXPECT_FALSE(r_.OnRefused("backend", /*probe=*/true, at))
        << "refusing already: not worth another log line";
    EXPECT_EQ(r_.NextProbe() - at, expected) << "probe " << i;
    at = r_.NextProbe();
  }
}

// ... until an answer of another kind, which opens it and shows it in the
// metrics (outbox_destination_refused 0).
TEST_F(ReachabilityTest, ARefusalHoldsUntilAnAnswerOfAnotherKind) {
  r_.OnRefused("backend", /*probe=*/false, kT0);
  EXPECT_TRUE(r_.Of("backend", kT0).refused);
  EXPECT_TRUE(r_.Of("backend", kT0).reachable);  // it answered
  EXPECT_TRUE(r_.OnAnswer("backend", kT0 + kMin));
  EXPECT_EQ(GateAt(kT0 + kMin), LaneGate::kOpen);
  EXPECT_FALSE(r_.Of("backend", kT0 + kMin).refused);
  EXPECT_EQ(r_.NextProbe(), absl::InfiniteFuture());
}

TEST_F(ReachabilityTest, PausedUntilResumed) {
  r_.Pause("backend");
  EXPECT_EQ(GateAt(kT0), LaneGate::kClosed);
  ASSERT_OUTBOX_OK(r_.Resume("backend"));
  EXPECT_EQ(GateAt(kT0), LaneGate::kOpen);
  EXPECT_STATUS_CODE(r_.Resume("nowhere"), absl::StatusCode::kNotFound);
}

TEST_F(ReachabilityTest, OfflineOnlyWhenEveryDestinationIsUnreachable) {
  r_.OnNeverReached("backend", false, kT0);
  EXPECT_FALSE(r_.AllUnreachable());
  r_.OnNeverReached("audit", false, kT0);
  EXPECT_TRUE(r_.AllUnreachable());
}

TEST_F(ReachabilityTest, SnapshotAddsUpEveryUnreachableSpell) {
  EXPECT_EQ(r_.Of("backend", kT0).unreachable, absl::ZeroDuration());
  r_.OnNeverReached("backend", false, kT0);
  EXPECT_FALSE(r_.Of("backend", kT0).reachable);
  EXPECT_EQ(r_.Of("backend", kT0 + absl::Seconds(4)).unreachable,
            absl::Seconds(4));  // the spell under way counts
  r_.OnAnswer("backend", kT0 + absl::Seconds(5));
  r_.OnNeverReached("backend", false, kT0 + absl::Seconds(20));
  r_.OnAnswer("backend", kT0 + absl::Seconds(22));
  const Reachability::Snapshot s = r_.Of("backend", kT0 + absl::Hours(1));
  EXPECT_TRUE(s.reachable);
  EXPECT_EQ(s.unreachable, absl::Seconds(7));
  EXPECT_EQ(r_.Of("audit", kT0 + absl::Hours(1)).unreachable,
            absl::ZeroDuration());
}

TEST_F(ReachabilityTest, SnapshotShowsAPause) {
  r_.Pause("backend");
  EXPECT_TRUE(r_.Of("backend", kT0).paused);
  EXPECT_FALSE(r_.Of("audit", kT0).paused);
}

}  // namespace
}  // namespace outbox
