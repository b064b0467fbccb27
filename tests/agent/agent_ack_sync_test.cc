// Copyright (c) edge-outbox authors.
//
// The acknowledgement sync bound (docs/reliability.md): the agent writes a
// delivery result without an fsync and syncs the store within
// agent.ack_sync_interval of it, busy or idle, so a power cut resends at most
// the last interval's deliveries. In process: a store over the
// fault-injecting file system, the recording transport and a fake clock that
// only the test moves; the backlog keeps the agent busy throughout.

#include <poll.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "tests/store/power_cut_store.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/recording_transport.h"

namespace outbox {
namespace {

constexpr int kBacklog = 200;
constexpr absl::Duration kRound = absl::Milliseconds(100);

class AgentAckSyncTest : public testing::PowerCutStoreTest {
 protected:
  void SetUp() override {
    options_.clock = &clock_;
    Open();
  }
  // The store reads clock_ until it is closed (Options::clock must outlive
  // it), and clock_ goes before the base class's members.
  void TearDown() override { store_.reset(); }

  void CommitSales(int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_OUTBOX_OK(CommitSale(absl::StrCat("sale-", i)));
    }
  }

  std::unique_ptr<Agent> MakeAgent(const std::string& interval = "1s") {
    AgentOptions options;
    options.config_text = absl::StrCat(R"(
      destinations { name: "sink" url: "http://sink.test/" }
      routes { event_type: "*" destination: "sink" }
      agent { max_in_flight: 2 ack_sync_interval: ")",
                                       interval, "\" }\n");
    options.clock = &clock_;
    options.watch_network = false;
    auto transport = std::make_unique<testing::RecordingTransport>(
        &receiver_, [] { return true; });
    transport_ = transport.get();
    options.transport = std::move(transport);
    auto agent = Agent::Create(store_.get(), std::move(options));
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? std::move(*agent) : nullptr;
  }

  // The power goes while `agent` is running: it is gone with the store.
  void CutPower(std::unique_ptr<Agent> agent) {
    fs_->Kill();
    agent.reset();
    CutPowerAndReopen();
  }

  // One sale delivered (its 2xx settled, not synced yet) and a second one's
  // request out and never answered (the transport holds it).
  void OneDeliveredOneOut(Agent* agent) {
    ASSERT_NO_FATAL_FAILURE(CommitSales(1));
    ASSERT_OUTBOX_OK(agent->RunOnce());  // sends the first
    ASSERT_NO_FATAL_FAILURE(CommitSales(1));
    ASSERT_OUTBOX_OK(agent->RunOnce());  // its 2xx settled; the second sent
    ASSERT_EQ(agent->stats().delivered, 1u);
    ASSERT_EQ(agent->stats().requests, 2u);
    transport_->Hold();
  }

  uint64_t DeliveredTotal() {
    auto stats = store_->GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->delivered_total : 0;
  }

  testing::FakeClock clock_;
  testing::RecordingTransport* transport_ = nullptr;  // the agent's
  // Every request answered 2xx.
  testing::Receiver receiver_{/*seed=*/1,
                              testing::AnswerWeights{1, 0, 0, 0, 0, 0}};
};

// Rounds 100 ms of fake time apart, for 3 s, the backlog never empty: what
// was delivered more than an interval (and one round) before the cut
// survives it. Synced only when idle, nothing would: the backlog keeps the
// agent busy.
TEST_F(AgentAckSyncTest, ABusyAgentSyncsDeliveriesWithinTheInterval) {
  ASSERT_NO_FATAL_FAILURE(CommitSales(kBacklog));
  auto agent = MakeAgent();
  ASSERT_NE(agent, nullptr);
  std::vector<uint64_t> delivered_by_round;
  for (int round = 0; round < 30; ++round) {
    ASSERT_OUTBOX_OK(agent->RunOnce());
    delivered_by_round.push_back(agent->stats().delivered);
    clock_.Advance(kRound);
  }
  ASSERT_LT(delivered_by_round.back(), uint64_t{kBacklog})
      << "the backlog must outlast the rounds, or the agent turns idle";
  // One interval and one round before the last round.
  const uint64_t due_synced =
      delivered_by_round[delivered_by_round.size() - 1 - 11];
  ASSERT_GT(due_synced, 0u);
  CutPower(std::move(agent));
  EXPECT_GE(DeliveredTotal(), due_synced)
      << "deliveries of more than ack_sync_interval ago were lost";
  // Nothing more than was delivered, and none half-settled: the rest are
  // pending, to be resent with their ids.
  EXPECT_LE(DeliveredTotal(), delivered_by_round.back());
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events + stats->delivered_total, uint64_t{kBacklog});
}

// A delivery settled while another request is still out (a slow receiver)
// leaves the agent busy, so nothing else wakes it: its own timer must, when
// the interval has passed, to sync. The poll's bound only guards a hang; the
// timer is the agent's real one, armed for the fake clock's interval.
TEST_F(AgentAckSyncTest, TheTimerWakesABusyAgentToSync) {
  auto agent = MakeAgent("100ms");
  ASSERT_NE(agent, nullptr);
  ASSERT_NO_FATAL_FAILURE(OneDeliveredOneOut(agent.get()));
  ASSERT_OUTBOX_OK(agent->RunOnce());  // nothing ready: the loop would wait
  pollfd p{agent->fd(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, /*timeout_ms=*/30000), 1)
      << "nothing woke the agent to sync its settled delivery";
  clock_.Advance(absl::Milliseconds(100));
  ASSERT_OUTBOX_OK(agent->RunOnce());
  CutPower(std::move(agent));
  EXPECT_EQ(DeliveredTotal(), 1u) << "the delivery was not synced";
}

// A clean stop syncs what was settled, however recently: Stop() within
// ack_sync_interval of a delivery (here an hour), with another request
// still out (abandoned after shutdown_grace: pending, resent later), and
// the power going right after. (Only unclean ends may resend: docs/
// reliability.md.)
TEST_F(AgentAckSyncTest, AStopSyncsTheDeliveriesSettledBeforeIt) {
  auto agent = MakeAgent("1h");
  ASSERT_NE(agent, nullptr);
  ASSERT_NO_FATAL_FAILURE(OneDeliveredOneOut(agent.get()));
  agent->Stop();
  ASSERT_OUTBOX_OK(agent->RunOnce());  // waits for the one in flight
  clock_.Advance(absl::Seconds(6));    // past shutdown_grace (5 s)
  ASSERT_OUTBOX_OK(agent->RunOnce());  // abandons it, stops
  CutPower(std::move(agent));
  EXPECT_EQ(DeliveredTotal(), 1u) << "the stop left the delivery unsynced";
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 1u);
}

}  // namespace
}  // namespace outbox
