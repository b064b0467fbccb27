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
#include "tests/testing/forwarding_store.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

class AgentRateLimitTest : public testing::AgentSinkTest {
 protected:
  void SetUp() override {
    AgentSinkTest::SetUp();
    // Ahead of the store's newest time (the system clock's), so trusted.
    clock_.Set(absl::Now() + absl::Minutes(1));
  }

  // Runs rounds, the clock not moving meanwhile, until no request is in
  // flight and a round starts none (what the rate limit lets go at this
  // time), and returns how many requests the sink has logged so far. Not
  // Drain(): a drain waits for the refill, which a frozen clock never
  // brings.
  size_t DrainedSoFar(Agent* agent) {
    uint64_t started = agent->stats().requests;
    for (int i = 0; i < 3000; ++i) {  // a hang guard, not a timing
      EXPECT_OUTBOX_OK(agent->RunOnce(clock_.Now() + absl::Milliseconds(20)));
      const AgentStats s = agent->stats();
      if (s.in_flight == 0 && s.requests == started) break;
      started = s.requests;
    }
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

// A batch takes its body's bytes before compression (docs/transports.md,
// "Rate limits"), the bytes its receiver reads: five 2 KB sales are 10 KB
// of NDJSON, two seconds' worth at 5,000 bytes/s, although gzip sends a
// small part of that. The second batch waits until the debt is repaid.
TEST_F(AgentRateLimitTest, ABatchSpendsItsBytesBeforeCompression) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  for (int i = 0; i < 10; ++i) {
    Txn txn;
    Event e;
    e.type = "sale";
    e.payload = absl::StrCat(R"({"n":)", i, R"(,"note":")",
                             std::string(2000, 'a'), R"("})");
    txn.Emit(e);
    ASSERT_OUTBOX_OK(store_->Commit(txn).status());
  }
  std::unique_ptr<Agent> agent =
      MakeAgent(Config("/", "",
                       "batch { max_events: 5 compression: \"gzip\" } "
                       "rate_limit { bytes_per_second: 5000 }"),
                &clock_);
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainedSoFar(agent.get()), 5u);
  EXPECT_EQ(agent->stats().requests, 1u);
  clock_.Advance(absl::Seconds(1));  // 5 KB repaid of more than 5 KB
  EXPECT_EQ(DrainedSoFar(agent.get()), 5u);
  clock_.Advance(absl::Seconds(2));
  EXPECT_EQ(DrainedSoFar(agent.get()), 10u);
}

// Counts the syncs the agent asks of the store.
class SyncCountingStore final : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::Status Sync() override {
    ++syncs;
    return base_->Sync();
  }
  int syncs = 0;
};

// While a rate limit holds the backlog back, each refill lets one event go
// and the round ends with nothing else to do. The acknowledgements are then
// synced once per ack_sync_interval, not at the end of every round: on a
// device that would be a flush of its flash per event.
TEST_F(AgentRateLimitTest, AcksWaitForTheSyncIntervalNotEachRefill) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  CommitEvents(30);
  SyncCountingStore counting(store_.get());
  AgentOptions options;
  options.config_text =
      Config("/", "", "rate_limit { events_per_second: 10 }");  // acks: 1 s;
  options.clock = &clock_;
  absl::StatusOr<std::unique_ptr<Agent>> agent =
      Agent::Create(&counting, std::move(options));
  ASSERT_OUTBOX_OK(agent);
  // Rounds until `n` are delivered; the fake clock stands still meanwhile,
  // and each round waits at most 20 ms of real time for an answer.
  auto deliver = [&](uint64_t n) {
    for (int round = 0; round < 500 && (*agent)->stats().delivered < n;
         ++round) {
      ASSERT_OUTBOX_OK(
          (*agent)->RunOnce(clock_.Now() + absl::Milliseconds(20)));
    }
    ASSERT_EQ((*agent)->stats().delivered, n);
  };
  ASSERT_NO_FATAL_FAILURE(deliver(10));  // a second's worth at once
  const int syncs_before = counting.syncs;
  for (int i = 1; i <= 20; ++i) {  // two seconds, one refill at a time
    clock_.Advance(absl::Milliseconds(100));
    ASSERT_NO_FATAL_FAILURE(deliver(10 + i));
  }
  // Each 1 s interval's acks once (the second may still be due): never one
  // per event.
  EXPECT_LE(counting.syncs - syncs_before, 3) << "syncs for 20 events";
  EXPECT_GE(counting.syncs - syncs_before, 1);
}

}  // namespace
}  // namespace outbox
