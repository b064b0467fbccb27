// Copyright (c) edge-outbox authors.
//
// A till's field life against the real outbox-sink, which checks signatures
// and the webhook-timestamp's tolerance (5 minutes) as Standard Webhooks
// receivers do: a board that booted with a stale clock, a secret the
// server rotated first, a receiver that forbids the device. None of them
// may move an event to the dead letters; each is delivered once fixed.
// Waits are bounded only to catch hangs; nothing asserts on how fast.

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/shifted_clock.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using testing::ShiftedClock;

constexpr absl::Duration kSixYears = absl::Hours(6 * 365 * 24);

class AgentFieldTest : public testing::AgentSinkTest {
 protected:
  // Every committed event in `ids` is still pending, untried, and nothing
  // is dead.
  void ExpectAllPendingUntried(const std::vector<std::string>& ids) {
    for (const std::string& id : ids) {
      absl::StatusOr<PendingEvent> e = store_->FindPending(id);
      ASSERT_OUTBOX_OK(e);
      EXPECT_EQ(e->attempts, 0u) << id;
    }
    EXPECT_EQ(store_->GetStats()->dead_letters, 0u);
  }

  // Runs `agent` (whose clock is `clock`) until the sink logged at least
  // `requests` requests. Returns false if that did not happen within a
  // bound meant for hangs.
  bool RunUntilRequests(Agent* agent, size_t requests,
                        Clock* clock = SystemClock()) {
    for (int i = 0; i < 600; ++i) {
      // RunOnce's deadline is on the agent's clock.
      EXPECT_OUTBOX_OK(agent->RunOnce(clock->Now() + absl::Milliseconds(50)));
      if (SinkLog().size() >= requests) return true;
    }
    return false;
  }

  size_t Answered(int status) const {
    size_t n = 0;
    for (const testing::SinkLine& l : SinkLog()) n += l.status == status;
    return n;
  }
};

TEST_F(AgentFieldTest, AClockSixYearsBackSendsNothingThenDeliversOnceRight) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(5);  // the right time
  ShiftedClock clock(-kSixYears);  // then a reboot without an RTC
  auto agent = MakeAgent(Config(), &clock);
  ASSERT_NE(agent, nullptr);
  auto pending = agent->Drain();
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, 5u);
  EXPECT_TRUE(SinkLog().empty()) << "nothing may leave with a stale time";
  ExpectAllPendingUntried(ids);
  EXPECT_EQ(Logged(LogEvent::kClockUntrusted), 1);

  clock.Shift(absl::ZeroDuration());  // NTP sets it right
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(Logged(LogEvent::kClockTrusted), 1);
  EXPECT_EQ(SinkLog().size(), ids.size());
  for (const testing::SinkLine& l : SinkLog()) {
    EXPECT_TRUE(l.signature_valid) << l.id;
    EXPECT_EQ(l.status, 200) << l.id;
  }
}

// A workflow's steps are time-stamped webhooks too: none leaves while the
// clock is known wrong (a survivor of the mutation campaign: nothing
// checked it), and the workflow runs once the clock is right.
TEST_F(AgentFieldTest, AClockSixYearsBackRunsNoWorkflowStep) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(1, 0, "order.created");
  ShiftedClock clock(-kSixYears);
  auto agent = MakeAgent(Config("/", R"(workflows { event_type: "order.created"
                       steps { name: "one" destination: "sink" } })"),
                         &clock);
  ASSERT_NE(agent, nullptr);
  auto pending = agent->Drain();
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, 1u);
  EXPECT_TRUE(SinkLog().empty()) << "a step left with a stale time";
  EXPECT_TRUE(absl::IsNotFound(store_->GetWorkflow(ids[0]).status()))
      << "not even its sent mark: nothing was planned";

  clock.Shift(absl::ZeroDuration());
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  ASSERT_EQ(SinkLog().size(), 1u);
  EXPECT_EQ(SinkLog()[0].status, 200);
}

// What the check saves: without it the receiver refuses every stale
// timestamp, and the refusals hold the events rather than bury them.
TEST_F(AgentFieldTest, WithTheClockCheckOffStaleRequestsAreRefusedAndHeld) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(5);
  ShiftedClock clock(-kSixYears);
  const std::string config = absl::StrReplaceAll(
      Config(), {{"agent {", "agent { clock_tolerance: \"0\""}});
  auto agent = MakeAgent(config, &clock);
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(RunUntilRequests(agent.get(), 1, &clock));
  agent->Stop();
  ASSERT_OUTBOX_OK(agent->Run());
  ASSERT_FALSE(SinkLog().empty());
  for (const testing::SinkLine& l : SinkLog()) {
    EXPECT_EQ(l.status, 401) << l.id;
    EXPECT_EQ(l.signature_error, "webhook-timestamp outside tolerance");
  }
  ExpectAllPendingUntried(ids);
  EXPECT_EQ(Logged(LogEvent::kDestinationRefused), 1);
  EXPECT_EQ(Logged(LogEvent::kClockUntrusted), 0);
}

TEST_F(AgentFieldTest, AWrongSecretIsHeldAndDeliveredOnceTheSecretIsFixed) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(5);
  const std::string right = secret_path_;
  secret_path_ = SecretFile("whsec_c2VjcmV0LXRoYXQtaXMtd3Jvbmc=");
  {
    auto agent = MakeAgent(Config());
    ASSERT_NE(agent, nullptr);
    ASSERT_TRUE(RunUntilRequests(agent.get(), 1));
    agent->Stop();
    ASSERT_OUTBOX_OK(agent->Run());
    EXPECT_GE(agent->stats().refused_results, 1u);
    EXPECT_EQ(agent->stats().dead_lettered, 0u);
  }
  for (const testing::SinkLine& l : SinkLog()) {
    EXPECT_EQ(l.status, 401) << l.id;
    EXPECT_FALSE(l.signature_valid) << l.id;
  }
  ExpectAllPendingUntried(ids);
  EXPECT_EQ(Logged(LogEvent::kDestinationRefused), 1);

  secret_path_ = right;  // the new secret reaches the till
  const size_t refused = SinkLog().size();
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(SinkLog().size(), refused + ids.size());
  EXPECT_EQ(Answered(200), ids.size());
}

TEST_F(AgentFieldTest, AForbiddingReceiverIsProbedOneEventAtATime) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(5);
  auto agent = MakeAgent(Config("/status/403"));
  ASSERT_NE(agent, nullptr);
  // The first round sends what is due; then probes, one at a time, each
  // after the backoff (100 ms doubling to 1 s here).
  ASSERT_TRUE(RunUntilRequests(agent.get(), ids.size() + 3));
  agent->Stop();
  ASSERT_OUTBOX_OK(agent->Run());
  EXPECT_EQ(Answered(403), SinkLog().size());
  ExpectAllPendingUntried(ids);
  EXPECT_EQ(Logged(LogEvent::kDestinationRefused), 1);
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);
}

// The metrics file says which destination is holding its events after a
// refusal (docs/operations.md: outbox_destination_refused{destination} 1),
// the gauge to alert on for a rotated secret or a revoked token.
TEST_F(AgentFieldTest, ARefusingReceiverShowsInTheMetricsFile) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  CommitEvents(2);
  const std::string metrics = dir_.Sub("outbox.prom");
  auto agent = MakeAgent(absl::StrReplaceAll(
      Config("/status/403"),
      {{"agent {", absl::StrCat("agent { metrics_file: \"", metrics, "\"")}}));
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(RunUntilRequests(agent.get(), 1));
  agent->Stop();
  ASSERT_OUTBOX_OK(agent->Run());  // writes the final figures
  std::ifstream in(metrics);
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("outbox_destination_refused{destination=\"sink\"} 1\n"),
            std::string::npos)
      << text;
}

TEST_F(AgentFieldTest, PerEventRefusalsStillDeadLetter) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(3);
  auto agent = MakeAgent(Config("/status/422"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(store_->GetStats()->dead_letters, ids.size());
  EXPECT_EQ(Logged(LogEvent::kDestinationRefused), 0);
}

TEST_F(AgentFieldTest, TheAnswersTableIsTheDestinations) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  // 422 made a hold, for this destination only.
  std::vector<std::string> ids = CommitEvents(2);
  {
    auto agent = MakeAgent(
        Config("/status/422", "", R"(answers { key: 422 value: "hold" })"));
    ASSERT_NE(agent, nullptr);
    ASSERT_TRUE(RunUntilRequests(agent.get(), 1));
    agent->Stop();
    ASSERT_OUTBOX_OK(agent->Run());
  }
  ExpectAllPendingUntried(ids);
  // And 403 made a dead letter, as it was before holds existed.
  auto agent = MakeAgent(Config(
      "/status/403", "", R"(answers { key: 403 value: "dead_letter" })"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(store_->GetStats()->dead_letters, ids.size());
}

}  // namespace
}  // namespace outbox
