// Copyright (c) edge-outbox authors.
//
// The agent's own schedule, in process: probing an unreachable receiver (one
// probe at a time per destination, probe_interval_min doubling to
// probe_interval_max, at once on a network change) and the dead-letter
// retention. The receiver is the recording transport and time is a fake
// clock that only the test moves, so "not yet" and "now" are exact: each
// RunOnce() does what is ready at the fake time and never waits, except
// where a test waits for a real netlink notification.

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "proto/storage.pb.h"
#include "tests/testing/in_process_agent.h"
#include "tests/testing/network_namespace.h"
#include "tests/testing/skip.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using testing::MakeEvent;

// Every request is answered "never reached the receiver" (the fixture's
// default receiver).
using AgentTimersTest = testing::InProcessAgentTest;

constexpr char kOneDestination[] = R"(
  destinations { name: "sink" url: "http://sink.test/" }
  routes { event_type: "*" destination: "sink" }
  agent { probe_interval_min: "1s" probe_interval_max: "8s" }
)";

TEST_F(AgentTimersTest, OneProbeAtATimePerUnreachableDestination) {
  for (int i = 0; i < 3; ++i) {
    CommitEvent(MakeEvent("a.sale"));
    CommitEvent(MakeEvent("b.sale"));
  }
  auto agent = MakeAgent(R"(
    destinations { name: "a" url: "http://a.test/" }
    destinations { name: "b" url: "http://b.test/" }
    routes { event_type: "a.*" destination: "a" }
    routes { event_type: "b.*" destination: "b" }
    agent { probe_interval_min: "1s" probe_interval_max: "8s" }
  )");
  ASSERT_NE(agent, nullptr);
  ASSERT_EQ(RequestsNow(agent.get()), 6u);  // both reachable until answered
  ASSERT_TRUE(agent->stats().offline);

  // The probes do not answer for a while; time passes well beyond any
  // backoff, and the agent gets round after round.
  transport_->Hold();
  clock_.Advance(absl::Seconds(1));
  for (int round = 0; round < 5; ++round) {
    ASSERT_OUTBOX_OK(agent->RunOnce());
    clock_.Advance(absl::Seconds(30));
  }
  std::vector<std::string> probed;
  for (const HttpRequest& r : transport_->waiting()) probed.push_back(r.url);
  std::sort(probed.begin(), probed.end());
  EXPECT_EQ(probed,
            (std::vector<std::string>{"http://a.test/", "http://b.test/"}));
  EXPECT_EQ(agent->stats().requests, 8u);

  transport_->Release();
  ASSERT_OUTBOX_OK(agent->RunOnce());
  auto pending = store_->ListPending(10);
  ASSERT_OUTBOX_OK(pending);
  ASSERT_EQ(pending->size(), 6u);
  for (const PendingEvent& e : *pending) EXPECT_EQ(e.attempts, 0u);
}

TEST_F(AgentTimersTest, ProbeIntervalDoublesFromMinToMax) {
  CommitEvent(MakeEvent("sale"));
  auto agent = MakeAgent(kOneDestination);
  ASSERT_NE(agent, nullptr);
  ASSERT_EQ(RequestsNow(agent.get()), 1u);  // unreachable from now on
  for (int seconds : {1, 2, 4, 8, 8, 8}) {
    SCOPED_TRACE(absl::StrCat("after a wait of ", seconds, " s"));
    clock_.Advance(absl::Seconds(seconds) - absl::Milliseconds(1));
    EXPECT_EQ(RequestsNow(agent.get()), 0u) << "probed too early";
    clock_.Advance(absl::Milliseconds(1));
    EXPECT_EQ(RequestsNow(agent.get()), 1u) << "no probe when due";
  }
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);
}

// What happened in the private network namespace.
struct NetworkChangeRun {
  std::string missing;  // non-empty: the feature this machine lacks
  std::string why;
  uint64_t probes_before_change = 0;
  uint64_t probes_after_change = 0;
};

TEST_F(AgentTimersTest, NetworkChangeProbesAtOnce) {
  CommitEvent(MakeEvent("sale"));
  NetworkChangeRun run;
  // In a thread of its own: it alone moves into a fresh network namespace,
  // where the agent's netlink socket hears only what this test changes.
  std::thread thread([&] {
    absl::Status entered = testing::EnterPrivateNetworkNamespace();
    if (!entered.ok()) {
      run.missing = "netns";
      run.why = std::string(entered.message());
      return;
    }
    // Probes an hour apart: only a network change can bring one sooner.
    auto agent = MakeAgent(R"(
      destinations { name: "sink" url: "http://sink.test/" }
      routes { event_type: "*" destination: "sink" }
      agent { probe_interval_min: "1h" probe_interval_max: "1h" }
    )",
                           /*watch_network=*/true);
    if (agent == nullptr) return;
    for (const LogRecord& r : log_) {
      if (r.event == LogEvent::kNetworkNotWatched) {
        run.missing = "netlink";
        run.why = r.message;
        return;
      }
    }
    EXPECT_EQ(RequestsNow(agent.get()), 1u);  // unreachable from now on
    clock_.Advance(absl::Minutes(59));
    run.probes_before_change = RequestsNow(agent.get());
    absl::Status up = testing::BringLoopbackUp();
    if (!up.ok()) {
      run.missing = "netns";
      run.why = std::string(up.message());
      return;
    }
    // Waits (real time, bounded to catch a hang) until the agent's fd says
    // there is work: the notification, not a timer, which is an hour away.
    const uint64_t before = agent->stats().requests;
    EXPECT_OUTBOX_OK(agent->RunOnce(clock_.Now() + absl::Seconds(30)));
    run.probes_after_change = agent->stats().requests - before;
  });
  thread.join();
  if (!run.missing.empty()) OUTBOX_SKIP_WITHOUT(run.missing, run.why);
  EXPECT_EQ(run.probes_before_change, 0u);
  EXPECT_EQ(run.probes_after_change, 1u);
}

TEST_F(AgentTimersTest, RetentionDeletesOldDeadLettersAndCountsThem) {
  CommitEvent(MakeEvent("sale"));
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(OnlyDue(), "rejected"));
  clock_.Advance(absl::Hours(10));
  const std::string young = CommitEvent(MakeEvent("sale"));
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(OnlyDue(), "rejected"));
  clock_.Advance(absl::Hours(15));  // the first is 25 h dead, the second 15 h
  auto agent = MakeAgent(R"(
    destinations { name: "sink" url: "http://sink.test/" }
    routes { event_type: "*" destination: "sink" }
    agent { dead_letter_retention: "24h" }
  )");
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->RunOnce());
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_EQ((*dead)[0].event.id, young);
  agent.reset();
  Reopen();
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->dead_letters_purged, 1u);
  EXPECT_EQ(stats->dead_letters, 1u);
}

// Housekeeping deletes by age only with the store's own clock: a wall
// clock 40 days ahead (a fast RTC, an NTP glitch, a year typed wrong) makes
// minutes-old dead letters look older than their retention. Nothing is
// purged until their retention has passed on the store's clock.
TEST_F(AgentTimersTest, AClockSetAheadPurgesNoDeadLetter) {
  for (int i = 0; i < 5; ++i) {
    CommitEvent(MakeEvent("sale"));
    ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(OnlyDue(), "rejected"));
  }
  clock_.Advance(absl::Minutes(5));
  clock_.Set(clock_.Now() + absl::Hours(24 * 40));  // the wall clock only
  auto agent = MakeAgent(R"(
    destinations { name: "sink" url: "http://sink.test/" }
    routes { event_type: "*" destination: "sink" }
    agent { dead_letter_retention: "720h" }
  )");
  ASSERT_NE(agent, nullptr);
  for (int i = 0; i < 3; ++i) {
    ASSERT_OUTBOX_OK(agent->RunOnce());
    clock_.Advance(absl::Hours(2));  // past the housekeeping interval
  }
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->dead_letters, 5u);
  EXPECT_EQ(stats->dead_letters_purged, 0u);
  // The retention passes on the store's clock: then they go.
  clock_.Advance(absl::Hours(720));
  ASSERT_OUTBOX_OK(agent->RunOnce());
  stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->dead_letters, 0u);
  EXPECT_EQ(stats->dead_letters_purged, 5u);
}

// A kept workflow definition goes once no stored workflow names it and the
// configuration does not have it: here the one workflow that ran under it
// is purged by workflow_retention, and the same housekeeping round deletes
// the definition (a row per configuration edit would otherwise pile up).
TEST_F(AgentTimersTest, ADefinitionNoWorkflowNamesIsDeletedAtHousekeeping) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  storage::WorkflowState done;
  done.set_phase(storage::WORKFLOW_PHASE_COMPLETED);
  done.set_definition("wd1-edited-away");
  done.set_finished_unix_ms(absl::ToUnixMillis(clock_.Now()));
  Settlement s;
  s.kind = Settlement::Kind::kDelivered;
  s.event = OnlyDue();
  s.workflow_state = done.SerializeAsString();
  s.workflow_definition_id = "wd1-edited-away";
  s.workflow_definition = "workflows { event_type: \"order.created\" }";
  ASSERT_OUTBOX_OK(store_->Settle({s}));
  clock_.Advance(absl::Hours(721));
  auto agent = MakeAgent(R"(
    destinations { name: "sink" url: "http://sink.test/" }
    routes { event_type: "*" destination: "sink" }
    workflows { event_type: "refund.created"
      steps { name: "refund" destination: "sink" } }
  )");
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->RunOnce());
  EXPECT_TRUE(absl::IsNotFound(store_->GetWorkflow(id).status()));
  auto definitions = store_->ListWorkflowDefinitions();
  ASSERT_OUTBOX_OK(definitions);
  EXPECT_TRUE(definitions->empty());
}

}  // namespace
}  // namespace outbox
