// Copyright (c) edge-outbox authors.
//
// A destination's rate limit (outbox.config.RateLimit) held against the
// real outbox-sink, on a fake clock: the agent sends a second's worth, then
// exactly what the refill allows each time the clock moves, whatever the
// backlog; the rest waits in the queue, none dead-lettered, no attempt
// spent. Counted, never timed.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

class AgentRateLimitTest : public testing::AgentSinkTest {
 protected:
  // Drains once (the clock does not move meanwhile) and returns how many
  // requests the sink has logged so far.
  void SetUp() override {
    AgentSinkTest::SetUp();
    // Ahead of the store's newest time (the system clock's), so trusted.
    clock_.Set(absl::Now() + absl::Minutes(1));
  }

  size_t DrainedSoFar(Agent* agent) {
    absl::StatusOr<uint64_t> pending = agent->Drain();
    EXPECT_TRUE(pending.ok()) << pending.status();
    return SinkLog().size();
  }

  testing::FakeClock clock_;
};

TEST_F(AgentRateLimitTest, EventsGoAtTheRateAndTheRestWaits) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  CommitEvents(20);
  std::unique_ptr<Agent> agent = MakeAgent(
      Config("/", "", "rate_limit { events_per_second: 5 }"), &clock_);
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainedSoFar(agent.get()), 5u);  // a second's worth at once
  EXPECT_EQ(DrainedSoFar(agent.get()), 5u);  // the clock did not move
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(DrainedSoFar(agent.get()), 10u);
  clock_.Advance(absl::Milliseconds(400));
  EXPECT_EQ(DrainedSoFar(agent.get()), 12u);
  // Never more than a second's worth. (Not much more than a few seconds
  // either: the sink refuses webhook timestamps 5 minutes off.)
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(DrainedSoFar(agent.get()), 17u);
  EXPECT_EQ(agent->stats().delivered, 17u);
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 3u);
  EXPECT_EQ(stats->dead_letters, 0u);
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);
}

TEST_F(AgentRateLimitTest, ABatchSpendsOneTokenPerEvent) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  CommitEvents(30);
  std::unique_ptr<Agent> agent =
      MakeAgent(Config("/", "",
                       "batch { max_events: 10 } "
                       "rate_limit { events_per_second: 10 }"),
                &clock_);
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainedSoFar(agent.get()), 10u);
  EXPECT_EQ(agent->stats().requests, 1u);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(DrainedSoFar(agent.get()), 20u);
}

TEST_F(AgentRateLimitTest, BytesPerSecondHoldsTheNextRequestUntilRepaid) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  CommitEvents(10);  // payloads {"key":"","n":i}: 16 bytes each
  std::unique_ptr<Agent> agent = MakeAgent(
      Config("/", "", "rate_limit { bytes_per_second: 50 }"), &clock_);
  ASSERT_NE(agent, nullptr);
  // 50 bytes of credit: three events leave 2, so a fourth goes, into debt
  // (-14), and the fifth waits for it to be repaid.
  EXPECT_EQ(DrainedSoFar(agent.get()), 4u);
  clock_.Advance(absl::Milliseconds(250));  // 12.5 bytes: still in debt
  EXPECT_EQ(DrainedSoFar(agent.get()), 4u);
  clock_.Advance(absl::Seconds(2));  // repaid, and the bucket full again
  EXPECT_EQ(DrainedSoFar(agent.get()), 8u);
}

}  // namespace
}  // namespace outbox
