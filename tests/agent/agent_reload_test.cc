// Copyright (c) edge-outbox authors.
//
// Agent::Reload, for firmware that runs the agent in its own process (issue
// 25, item 5; outbox-agent's SIGHUP goes through it too, tested with the
// real binaries in outbox_agent_reload_test): against the real outbox-sink,
// a wrong configuration is refused and the running one goes on; a right one
// takes over with the same descriptor and counters, after the requests in
// flight finished under the configuration they started with.

#include <poll.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

class AgentReloadTest : public testing::AgentSinkTest {
 protected:
  // The sink's log lines for `path`.
  std::vector<testing::SinkLine> At(const std::string& path) const {
    std::vector<testing::SinkLine> lines;
    for (const testing::SinkLine& l : SinkLog()) {
      if (l.path == path) lines.push_back(l);
    }
    return lines;
  }
};

TEST_F(AgentReloadTest, AWrongConfigurationIsRefusedAndTheRunningOneGoesOn) {
  StartSink();
  std::unique_ptr<Agent> agent = MakeAgent(Config("/a"));
  ASSERT_NE(agent, nullptr);
  absl::Status refused = agent->Reload("", "destinations { name: \"x\" }");
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  refused = agent->Reload(dir_.Sub("missing.textproto"), "");
  EXPECT_TRUE(absl::IsNotFound(refused)) << refused;
  EXPECT_EQ(Logged(LogEvent::kConfigReloadRefused), 2);
  EXPECT_EQ(Logged(LogEvent::kConfigReloaded), 0);

  CommitEvents(3);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(At("/a").size(), 3u);
}

TEST_F(AgentReloadTest, ARightOneTakesOverWithTheSameDescriptorAndCounters) {
  StartSink();
  std::unique_ptr<Agent> agent = MakeAgent(Config("/a"));
  ASSERT_NE(agent, nullptr);
  const int fd = agent->fd();
  CommitEvents(2);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);

  ASSERT_OUTBOX_OK(agent->Reload("", Config("/b")));
  EXPECT_EQ(Logged(LogEvent::kConfigReloaded), 1);
  EXPECT_EQ(agent->fd(), fd);
  // Readable at once, with nothing committed: a loop that polls it runs
  // the new configuration's first round without waiting for a commit.
  pollfd ready = {fd, POLLIN, 0};
  EXPECT_EQ(poll(&ready, 1, /*timeout_ms=*/10000), 1);
  const std::vector<std::string> later = CommitEvents(3);
  // The descriptor a firmware loop polls wakes it for the new loop's work.
  ASSERT_OUTBOX_OK(agent->RunOnce(absl::Now() + absl::Seconds(10)));
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(At("/a").size(), 2u);
  std::set<std::string> at_b;
  for (const testing::SinkLine& l : At("/b")) at_b.insert(l.id);
  EXPECT_EQ(at_b, std::set<std::string>(later.begin(), later.end()));
  EXPECT_EQ(agent->stats().delivered, 5u);
}

// A request in flight when the reload comes finishes under the
// configuration it started with, once: it is neither abandoned nor sent
// again under the new one.
TEST_F(AgentReloadTest, RequestsInFlightFinishUnderTheOldConfiguration) {
  StartSink({"--delay-ms", "300"});
  std::unique_ptr<Agent> agent = MakeAgent(Config("/a"));
  ASSERT_NE(agent, nullptr);
  const std::vector<std::string> first = CommitEvents(4);
  ASSERT_OUTBOX_OK(agent->RunOnce());  // sends them; the answers take 300 ms
  EXPECT_EQ(agent->stats().requests, 4u);
  EXPECT_TRUE(SinkLog().empty());

  // An Interrupt() (a second SIGHUP) while the reload waits for them must
  // not cut that wait short: they would be abandoned and sent again.
  std::thread interrupter([&agent] {
    absl::SleepFor(absl::Milliseconds(100));
    agent->Interrupt();
  });
  ASSERT_OUTBOX_OK(agent->Reload("", Config("/b")));
  interrupter.join();
  EXPECT_EQ(At("/a").size(), 4u) << "Reload returns once they are answered";
  // That interrupt reaches the new loop: Run() returns for it.
  ASSERT_OUTBOX_OK(agent->Run());
  CommitEvents(2);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  std::set<std::string> at_a;
  for (const testing::SinkLine& l : At("/a")) {
    EXPECT_EQ(l.status, 200);
    at_a.insert(l.id);
  }
  EXPECT_EQ(at_a, std::set<std::string>(first.begin(), first.end()));
  EXPECT_EQ(At("/b").size(), 2u) << "nothing of the first four sent again";
  EXPECT_EQ(agent->stats().delivered, 6u);
}

// The store enforces its classes at every commit and they are fixed while
// it is open: a reload whose classes differ in any rule (limits, on_full,
// expire_after, keep_evicted) is refused with a message saying so, and the
// running configuration goes on. One without classes takes the store's.
class AgentReloadClassesTest : public AgentReloadTest {
 protected:
  void SetUp() override {
    AgentReloadTest::SetUp();
    EventClass telemetry;
    telemetry.name = "telemetry";
    telemetry.event_types = {"telemetry.*"};
    telemetry.evictable = true;
    telemetry.max_pending_events = 100;
    telemetry.max_pending_bytes = 100000;
    telemetry.on_full = EventClass::OnFull::kDropOldest;
    telemetry.expire_after = absl::Hours(1);
    ASSERT_OUTBOX_OK(store_->Close());
    Options options;
    options.tables = {"sales"};
    options.event_classes = {telemetry};
    auto store = Store::Open(options, dir_.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    store_ = *std::move(store);
  }

  // Config(path) with the class the store was opened with, but its field
  // `field` set to `value` when given.
  std::string WithClass(const std::string& path, const std::string& field = "",
                        const std::string& value = "") const {
    std::vector<std::pair<std::string, std::string>> fields = {
        {"name", "\"telemetry\""},       {"event_types", "\"telemetry.*\""},
        {"evictable", "true"},           {"max_pending_events", "100"},
        {"max_pending_bytes", "100000"}, {"on_full", "\"drop_oldest\""},
        {"expire_after", "\"1h\""}};
    bool replaced = false;
    for (auto& [name, v] : fields) {
      if (name == field) {
        v = value;
        replaced = true;
      }
    }
    if (!field.empty() && !replaced) fields.emplace_back(field, value);
    std::string text = "classes {";
    for (const auto& [name, v] : fields)
      absl::StrAppend(&text, " ", name, ": ", v);
    return Config(path, absl::StrCat(text, " }\n"));
  }
};

TEST_F(AgentReloadClassesTest, AReloadThatChangesTheClassesIsRefused) {
  StartSink();
  std::unique_ptr<Agent> agent = MakeAgent(WithClass("/a"));
  ASSERT_NE(agent, nullptr);
  const std::vector<std::pair<std::string, std::string>> changes = {
      {"max_pending_events", "101"},
      {"max_pending_bytes", "100001"},
      {"on_full", "\"reject\""},
      {"expire_after", "\"2h\""},
      {"keep_evicted", "false"}};
  for (const auto& [field, value] : changes) {
    SCOPED_TRACE(field);
    const size_t logged = agent_log_.size();
    absl::Status refused = agent->Reload("", WithClass("/b", field, value));
    EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
    EXPECT_THAT(refused.message(), HasSubstr("classes differ"));
    ASSERT_EQ(agent_log_.size(), logged + 1);
    EXPECT_EQ(agent_log_.back().event, LogEvent::kConfigReloadRefused);
    EXPECT_THAT(agent_log_.back().message, HasSubstr("classes differ"));
    EXPECT_THAT(agent_log_.back().message,
                HasSubstr("going on with the configuration already running"));
  }
  EXPECT_EQ(Logged(LogEvent::kConfigReloaded), 0);
  CommitEvents(2);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(At("/a").size(), 2u);
  EXPECT_TRUE(At("/b").empty());
}

TEST_F(AgentReloadClassesTest, AReloadWithoutClassesTakesTheStoresClasses) {
  StartSink();
  std::unique_ptr<Agent> agent = MakeAgent(WithClass("/a"));
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->Reload("", Config("/b")));
  CommitEvents(2);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(At("/b").size(), 2u);
}

// Stop() while no reload runs reaches the loop; a stopped agent stays
// stopped across a reload.
TEST_F(AgentReloadTest, AStoppedAgentStaysStoppedAfterAReload) {
  StartSink();
  std::unique_ptr<Agent> agent = MakeAgent(Config("/a"));
  ASSERT_NE(agent, nullptr);
  agent->Stop();
  ASSERT_OUTBOX_OK(agent->Reload("", Config("/b")));
  CommitEvents(2);
  absl::StatusOr<uint64_t> pending = agent->Drain();
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, 2u);
  EXPECT_TRUE(SinkLog().empty());
}

}  // namespace
}  // namespace outbox
