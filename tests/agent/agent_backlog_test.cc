// Copyright (c) edge-outbox authors.
//
// The agent beside a large backlog for a destination it cannot reach
// (issue 11, item 1), against the real outbox-sink on loopback and a
// destination whose port refuses connections (127.0.0.1:9).
//
// Invariant: once that destination is known unreachable, each wake-up (a
// commit for the reachable destination) reads only the event it sends: the
// values RocksDB reads on the agent's thread (PerfContext) add up to two
// reads of each delivered event, NextDue's and Settle's, whatever waits for
// the unreachable destination, plain events or workflow events whose next
// step needs it (these are planned once, then wait in that destination's
// lane). Counted, never timed.

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/rocks_work.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

constexpr int kBacklog = 20000;
constexpr int kWakeUps = 20;

class AgentBacklogTest : public testing::AgentSinkTest {
 protected:
  // The sink, and "offline" on a port nobody listens on; probes an hour
  // apart, so that none falls among the counted wake-ups.
  std::string TwoDestinations() const {
    return absl::StrCat(R"(
      destinations {
        name: "sink" url: "http://127.0.0.1:)",
                        port_, R"(/" secrets_file: ")", secret_path_, R"("
      }
      destinations { name: "offline" url: "http://127.0.0.1:9/" }
      routes { event_type: "*" destination: "sink" }
      agent { probe_interval_min: "1h" probe_interval_max: "1h" }
    )");
  }

  // TwoDestinations, and a workflow for "order" whose one step goes to
  // "offline" (every backlog event) or else to "sink": its lane of the type
  // stays open, since the sink is up.
  std::string WithWorkflow() const {
    return absl::StrCat(TwoDestinations(), R"(
      workflows {
        event_type: "order"
        steps {
          name: "charge"
          choose {
            destination: "offline"
            when { value: "request:/n" op: "lt" expected: "1000000" }
          }
          choose { destination: "sink" }
        }
      })");
  }

  // kBacklog events for "offline": plain ones of type "sale", or of `type`
  // with no explicit destination (a workflow's).
  void CommitBacklog(const std::string& type = "") {
    for (int done = 0; done < kBacklog; done += 100) {
      Txn txn;
      for (int i = 0; i < 100; ++i) {
        Event e;
        e.type = type.empty() ? "sale" : type;
        if (type.empty()) e.destination = "offline";
        e.payload = absl::StrCat(R"({"n":)", done + i, "}");
        txn.Emit(e);
      }
      ASSERT_OUTBOX_OK(store_->Commit(txn));
    }
  }

  uint64_t PendingBytes() {
    auto stats = store_->GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->pending_bytes : 0;
  }

  // Runs `agent` until `done` holds: a round at once, then rounds that
  // wait for its fd (bounded, to catch hangs: a workflow backlog takes a
  // round per max_in_flight events to be planned).
  template <typename Done>
  void RunUntil(Agent* agent, Done done) {
    const absl::Time guard = absl::Now() + absl::Seconds(120);
    for (int round = 0; absl::Now() < guard && !done(); ++round) {
      ASSERT_OUTBOX_OK(agent->RunOnce(
          round == 0 ? absl::InfinitePast() : absl::Now() + absl::Seconds(5)));
    }
    ASSERT_TRUE(done()) << "the agent never got there";
  }

  // Runs an agent beside the backlog of `type` (CommitBacklog; a workflow
  // type: under WithWorkflow), then kWakeUps commits of one plain event for
  // the sink, and checks that those read only what they send.
  void WakeUpsReadOnlyWhatTheySend(const std::string& type);
};

TEST_F(AgentBacklogTest,
       WakeUpsBesideAnUnreachableBacklogReadOnlyWhatTheySend) {
  WakeUpsReadOnlyWhatTheySend("");
}

// The workflow events are each planned once (a few are sent, and refused),
// then wait in the lane of "offline", which the sink's events pass by.
TEST_F(AgentBacklogTest,
       WakeUpsBesideWorkflowsWaitingForAnUnreachableStepReadOnlyWhatTheySend) {
  WakeUpsReadOnlyWhatTheySend("order");
}

void AgentBacklogTest::WakeUpsReadOnlyWhatTheySend(const std::string& type) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  ASSERT_NO_FATAL_FAILURE(CommitBacklog(type));
  auto agent = MakeAgent(type.empty() ? TwoDestinations() : WithWorkflow());
  ASSERT_NE(agent, nullptr);
  // Its first round tries a few of the backlog and learns that "offline"
  // refuses connections; nothing else goes there for an hour.
  ASSERT_NO_FATAL_FAILURE(RunUntil(agent.get(), [&] {
    return agent->stats().offline_results > 0 &&
           agent->stats().requests == agent->stats().offline_results;
  }));
  const uint64_t offline_requests = agent->stats().requests;

  // What one event for the sink weighs in the store.
  const uint64_t before = PendingBytes();
  CommitEvents(1);
  const uint64_t event_bytes = PendingBytes() - before;
  // (Due after the backlog: the workflow events, due first, are each
  // planned once before it.)
  ASSERT_NO_FATAL_FAILURE(
      RunUntil(agent.get(), [&] { return agent->stats().delivered == 1; }));

  const testing::RocksWork work = testing::CountRocksWork([&] {
    for (int i = 0; i < kWakeUps; ++i) {
      CommitEvents(1);
      ASSERT_NO_FATAL_FAILURE(RunUntil(agent.get(), [&] {
        return agent->stats().delivered == static_cast<uint64_t>(i + 2);
      }));
    }
  });
  std::printf(
      "%d wake-ups beside %d %s events for an unreachable destination: %s; "
      "one event is %llu bytes\n",
      kWakeUps, kBacklog, type.empty() ? "plain" : type.c_str(),
      ::testing::PrintToString(work).c_str(),
      static_cast<unsigned long long>(event_bytes));

  // NextDue reads each event it hands out, Settle reads it again. (More
  // than zero: the reads were counted, on this thread.)
  EXPECT_GT(work.value_bytes_read, 0u);
  EXPECT_LE(work.value_bytes_read, 2 * kWakeUps * event_bytes);
  EXPECT_EQ(work.tombstones_skipped, 0u);
  EXPECT_EQ(agent->stats().requests, offline_requests + kWakeUps + 1);
  EXPECT_EQ(SinkLog().size(), static_cast<size_t>(kWakeUps + 1));
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, static_cast<uint64_t>(kBacklog));
}

}  // namespace
}  // namespace outbox
