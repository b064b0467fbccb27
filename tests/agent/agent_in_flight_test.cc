// Copyright (c) edge-outbox authors.
//
// An event in flight keeps its ordering key's place until its answer is
// settled, whatever takes it out of the queue meanwhile (its class's expiry,
// an eviction to make room). Else the key's next event becomes due while the
// first request is still out, and the receiver may see the two in reverse
// order. In process: the recording transport holds the first request
// unanswered while the fake clock moves.

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "tests/testing/in_process_agent.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using testing::Answer;
using testing::MakeEvent;

constexpr char kConfig[] = R"(
  destinations { name: "sink" url: "http://sink.test/" }
  routes { event_type: "*" destination: "sink" }
)";

class AgentInFlightTest : public testing::InProcessAgentTest {
 protected:
  void OpenWith(EventClass c) {
    options_.event_classes = {std::move(c)};
    Reopen();
  }

  static EventClass Telemetry() {
    EventClass c;
    c.name = "telemetry";
    c.event_types = {"telemetry.*"};
    c.evictable = true;
    return c;
  }

  std::string CommitKeyed(const std::string& key) {
    Event e = MakeEvent("telemetry.temp");
    e.ordering_key = key;
    return CommitEvent(e);
  }

  // The webhook-ids the receiver got, in order.
  std::vector<std::string> Received() const {
    std::vector<std::string> ids;
    for (const auto& r : receiver_->log()) ids.push_back(r.webhook_id);
    return ids;
  }
};

TEST_F(AgentInFlightTest, AnExpiredHeadInFlightHoldsItsKeyUntilItsAnswer) {
  EventClass telemetry = Telemetry();
  telemetry.expire_after = absl::Hours(1);
  ASSERT_NO_FATAL_FAILURE(OpenWith(telemetry));
  const std::string first = CommitKeyed("sensor-1");
  clock_.Advance(absl::Minutes(50));
  const std::string second = CommitKeyed("sensor-1");
  AnswerAlways(Answer::kOk);
  auto agent = MakeAgent(kConfig);
  ASSERT_NE(agent, nullptr);
  transport_->Hold();  // the receiver is slow to answer the first
  ASSERT_OUTBOX_OK(agent->RunOnce());
  ASSERT_EQ(transport_->waiting().size(), 1u);
  // The first is past its class's expire_after while its request is out.
  clock_.Advance(absl::Minutes(15));
  for (int i = 0; i < 4; ++i) {
    ASSERT_OUTBOX_OK(agent->RunOnce());
    clock_.Advance(absl::Seconds(11));  // past the agent's class check
  }
  ASSERT_EQ(store_->GetStats()->expired_total, 1u);
  EXPECT_EQ(transport_->waiting().size(), 1u)
      << "the key's next event left while the first was in flight";
  transport_->Release();
  for (int i = 0; i < 4; ++i) ASSERT_OUTBOX_OK(agent->RunOnce());
  EXPECT_EQ(Received(), (std::vector<std::string>{first, second}));
  EXPECT_EQ(store_->GetStats()->pending_events, 0u);
}

TEST_F(AgentInFlightTest, AnEvictedHeadInFlightHoldsItsKeyUntilItsAnswer) {
  EventClass telemetry = Telemetry();
  telemetry.max_pending_events = 2;
  telemetry.on_full = EventClass::OnFull::kDropOldest;
  ASSERT_NO_FATAL_FAILURE(OpenWith(telemetry));
  const std::string first = CommitKeyed("sensor-1");
  const std::string second = CommitKeyed("sensor-1");
  AnswerAlways(Answer::kOk);
  auto agent = MakeAgent(kConfig);
  ASSERT_NE(agent, nullptr);
  transport_->Hold();
  ASSERT_OUTBOX_OK(agent->RunOnce());
  ASSERT_EQ(transport_->waiting().size(), 1u);
  // A third reading evicts the oldest, the first, whose request is out.
  const std::string third = CommitKeyed("sensor-1");
  ASSERT_EQ(store_->GetStats()->evicted_total, 1u);
  for (int i = 0; i < 3; ++i) ASSERT_OUTBOX_OK(agent->RunOnce());
  EXPECT_EQ(transport_->waiting().size(), 1u)
      << "the key's next event left while the first was in flight";
  transport_->Release();
  for (int i = 0; i < 6; ++i) ASSERT_OUTBOX_OK(agent->RunOnce());
  EXPECT_EQ(Received(), (std::vector<std::string>{first, second, third}));
  EXPECT_EQ(store_->GetStats()->pending_events, 0u);
}

}  // namespace
}  // namespace outbox
