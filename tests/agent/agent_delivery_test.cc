// Copyright (c) edge-outbox authors.
//
// The delivery agent against the real outbox-sink on loopback: healthy
// delivery, retries, throttling, dead letters, paused destinations, replay
// and lost answers (wrong secrets and clocks: agent_field_test). Waits are
// bounded only to catch hangs; nothing asserts on how fast anything was.

#include <poll.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using testing::PayloadN;

class AgentDeliveryTest : public testing::AgentSinkTest {
 protected:
  // Drains with `agent` and returns how many events are still pending.
  uint64_t DrainWith(Agent* agent) {
    auto pending = agent->Drain();
    EXPECT_TRUE(pending.ok()) << pending.status();
    return pending.ok() ? *pending : ~uint64_t{0};
  }

  // Requests the sink answered 2xx, per id.
  std::map<std::string, int> Delivered() const {
    std::map<std::string, int> count;
    for (const testing::SinkLine& l : SinkLog()) {
      if (l.status >= 200 && l.status < 300) ++count[l.id];
    }
    return count;
  }
};

using testing::PayloadN;

std::string PayloadKey(const std::string& body) {
  const size_t at = body.find("\"key\":\"");
  if (at == std::string::npos) return "";
  return body.substr(at + 7, body.find('"', at + 7) - at - 7);
}

TEST_F(AgentDeliveryTest, ThousandEventsDeliveredExactlyOnceInKeyOrder) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(1000, /*keys=*/10);
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainWith(agent.get()), 0u);

  std::map<std::string, int> delivered = Delivered();
  EXPECT_EQ(delivered.size(), ids.size());
  for (const std::string& id : ids) EXPECT_EQ(delivered[id], 1) << id;
  std::map<std::string, int> last_n;
  int checked = 0;
  for (const testing::SinkLine& l : SinkLog()) {
    EXPECT_TRUE(l.signature_valid) << l.id;
    EXPECT_FALSE(l.duplicate) << l.id;
    const std::string key = PayloadKey(l.body);
    const int n = PayloadN(l.body);
    ASSERT_GE(n, 0) << l.body;
    auto it = last_n.find(key);
    if (it != last_n.end()) {
      EXPECT_LT(it->second, n) << "key " << key;
    }
    last_n[key] = n;
    ++checked;
  }
  EXPECT_EQ(checked, 1000);
  EXPECT_EQ(agent->stats().delivered, 1000u);
  EXPECT_EQ(store_->GetStats()->delivered_total, 1000u);
}

TEST_F(AgentDeliveryTest, ServerErrorsAreRetriedUntilDelivered) {
  ASSERT_NO_FATAL_FAILURE(StartSink({"--fail-rate", "0.4", "--seed", "7"}));
  const std::vector<std::string> ids = CommitEvents(30, /*keys=*/3);
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(Delivered().size(), ids.size());
  int failures = 0;
  for (const testing::SinkLine& l : SinkLog()) failures += l.status == 503;
  EXPECT_GT(failures, 0);
  EXPECT_EQ(agent->stats().retries_scheduled, static_cast<uint64_t>(failures));
}

TEST_F(AgentDeliveryTest, ThrottlingWaitsAtLeastRetryAfter) {
  ASSERT_NO_FATAL_FAILURE(StartSink(
      {"--throttle-rate", "0.5", "--retry-after", "1", "--seed", "3"}));
  CommitEvents(10);
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  // Per id, the request after a 429 came at least Retry-After (1 s) later,
  // by the sink's own receive times (a millisecond of rounding allowed).
  std::map<std::string, int64_t> throttled_at;
  int gaps = 0;
  for (const testing::SinkLine& l : SinkLog()) {
    auto it = throttled_at.find(l.id);
    if (it != throttled_at.end()) {
      EXPECT_GE(l.ts_ms - it->second, 999) << l.id;
      ++gaps;
      throttled_at.erase(it);
    }
    if (l.status == 429) throttled_at[l.id] = l.ts_ms;
  }
  EXPECT_GT(gaps, 0);
}

TEST_F(AgentDeliveryTest, BadRequestDeadLettersAtOnce) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(1);
  auto agent = MakeAgent(Config("/status/400"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainWith(agent.get()), 0u);
  EXPECT_EQ(SinkLog().size(), 1u);
  auto dead = store_->FindDeadLetter(ids[0]);
  ASSERT_OUTBOX_OK(dead);
  EXPECT_NE(dead->reason.find("400"), std::string::npos) << dead->reason;
  EXPECT_EQ(dead->event.last_http_status, 400);
  EXPECT_EQ(dead->event.attempts, 1u);
}

TEST_F(AgentDeliveryTest, FirmwareMainLoopDrivesTheAgentThroughItsFd) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(20, /*keys=*/2);
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  // The firmware's own loop: poll the agent's fd among its own, then let the
  // agent do what is ready. Bounded only to catch a hang.
  int rounds = 0;
  while (store_->GetStats()->pending_events > 0 && rounds < 10000) {
    pollfd p{agent->fd(), POLLIN, 0};
    poll(&p, 1, /*timeout_ms=*/100);
    ASSERT_OUTBOX_OK(agent->RunOnce());
    ++rounds;
  }
  EXPECT_EQ(store_->GetStats()->pending_events, 0u);
  EXPECT_EQ(Delivered().size(), ids.size());
  // RunOnce(deadline) waits for work: with nothing to do it returns by then.
  ASSERT_OUTBOX_OK(agent->RunOnce(absl::Now() + absl::Milliseconds(10)));
}

TEST_F(AgentDeliveryTest, GonePausesTheDestinationUntilResumed) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  CommitEvents(3, /*keys=*/3);  // independent keys: only the pause holds them
  auto agent = MakeAgent(Config("/status/410"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainWith(agent.get()), 3u);
  // Requests already in flight when the first 410 came back also got one.
  const size_t answered = SinkLog().size();
  EXPECT_GE(answered, 1u);
  CommitEvents(3, /*keys=*/3);
  EXPECT_EQ(DrainWith(agent.get()), 6u);
  EXPECT_EQ(SinkLog().size(), answered) << "nothing sent while paused";

  ASSERT_OUTBOX_OK(agent->ResumeDestination("sink"));
  EXPECT_EQ(DrainWith(agent.get()), 6u);
  EXPECT_GT(SinkLog().size(), answered);
  EXPECT_STATUS_CODE(agent->ResumeDestination("nope"),
                     absl::StatusCode::kNotFound);
}

TEST_F(AgentDeliveryTest, ReplayDeliversADeadLetter) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(1);
  {
    auto rejecting = MakeAgent(Config("/status/422"));
    ASSERT_NE(rejecting, nullptr);
    EXPECT_EQ(DrainWith(rejecting.get()), 0u);
  }
  ASSERT_OUTBOX_OK(store_->FindDeadLetter(ids[0]));
  ASSERT_OUTBOX_OK(store_->Replay(ids[0]));
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainWith(agent.get()), 0u);
  EXPECT_EQ(Delivered()[ids[0]], 1);
}

TEST_F(AgentDeliveryTest, LostAnswerIsResentWithSameIdAndSeenAsDuplicate) {
  ASSERT_NO_FATAL_FAILURE(StartSink({"--drop-rate", "0.5", "--seed", "11"}));
  const std::vector<std::string> ids = CommitEvents(20);
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  std::set<std::string> dropped;
  int duplicates_after_drop = 0;
  for (const testing::SinkLine& l : SinkLog()) {
    if (l.dropped) {
      dropped.insert(l.id);
    } else if (dropped.count(l.id) > 0) {
      EXPECT_TRUE(l.duplicate) << "resend of " << l.id;
      duplicates_after_drop += l.duplicate;
    }
  }
  EXPECT_FALSE(dropped.empty());
  EXPECT_GT(duplicates_after_drop, 0);
  for (const std::string& id : ids) EXPECT_GE(Delivered()[id], 1) << id;
}

// A configuration without a route for a type (one that lost it in a
// change, say) must not empty that type's backlog into the dead letters:
// its events are held, and a configuration with the route sends them all.
TEST_F(AgentDeliveryTest, AnUnroutedTypeIsHeldUntilARouteComes) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> audits = CommitEvents(3, 0, "audit.trail");
  const std::vector<std::string> sales = CommitEvents(2, 0, "sale.created");
  const std::string base =
      absl::StrCat(R"(
    destinations { name: "sink" url: "http://127.0.0.1:)",
                   port_, R"(/" secrets_file: ")", secret_path_, R"(" }
    routes { event_type: "sale.*" destination: "sink" })");
  {
    auto agent = MakeAgent(base);
    ASSERT_NE(agent, nullptr);
    EXPECT_EQ(DrainWith(agent.get()), audits.size());
  }
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->dead_letters, 0u);
  EXPECT_EQ(SinkLog().size(), sales.size());
  int records = 0;
  for (const LogRecord& r : agent_log_) {
    if (r.event != LogEvent::kNoRoute) continue;
    ++records;
    EXPECT_EQ(r.event_id, audits[0]);
    EXPECT_THAT(r.message, ::testing::HasSubstr("audit.trail"));
  }
  EXPECT_EQ(records, 1) << "one record for the type, not one per event";

  auto agent = MakeAgent(absl::StrCat(
      base, R"( routes { event_type: "audit.*" destination: "sink" })"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainWith(agent.get()), 0u);
  // Each once (unkeyed events promise no order among themselves).
  std::vector<std::string> sent;
  for (const testing::SinkLine& l : SinkLog()) sent.push_back(l.id);
  EXPECT_THAT(sent, ::testing::UnorderedElementsAre(
                        sales[0], sales[1], audits[0], audits[1], audits[2]));
}

}  // namespace
}  // namespace outbox
