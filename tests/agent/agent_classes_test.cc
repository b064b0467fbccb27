// Copyright (c) edge-outbox authors.
//
// Event classes with the real agent and outbox-sink: a refund of priority 9
// committed behind a backlog leaves first; expiry gives up old events only
// by a clock the agent trusts, never because the wall clock jumped; every
// burst of evictions or expiries is one log record. Counted, never timed.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/text_files.h"

namespace outbox {
namespace {

constexpr absl::Duration kYear = absl::Hours(24 * 365);

class AgentClassesTest : public testing::AgentSinkTest {
 protected:
  void SetUp() override {
    AgentSinkTest::SetUp();
    // Ahead of the store's newest time (the system clock's), so trusted.
    clock_.Set(absl::Now() + absl::Minutes(1));
  }
  // A store OpenWith opened reads clock_ until it is closed (Options::clock
  // must outlive it), and clock_ goes before the base class's members.
  void TearDown() override {
    AgentSinkTest::TearDown();
    store_.reset();
  }

  // Reopens the store with `classes`, on the fake clock.
  void OpenWith(std::vector<EventClass> classes) {
    ASSERT_OUTBOX_OK(store_->Close());
    store_.reset();
    Options options;
    options.tables = {"sales"};
    options.clock = &clock_;
    options.event_classes = std::move(classes);
    auto store = Store::Open(options, dir_.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    store_ = std::move(*store);
  }

  static EventClass Telemetry(absl::Duration expire_after) {
    EventClass c;
    c.name = "telemetry";
    c.event_types = {"telemetry.*"};
    c.evictable = true;
    c.expire_after = expire_after;
    return c;
  }

  std::string CommitOne(const std::string& type) {
    Txn txn;
    Event e;
    e.type = type;
    e.payload = "{}";
    const std::string id = txn.Emit(e);
    EXPECT_OUTBOX_OK(store_->Commit(txn));
    return id;
  }

  // Runs `agent` for a few rounds at the fake clock's present.
  void Rounds(Agent* agent, int n = 3) {
    for (int i = 0; i < n; ++i) {
      EXPECT_OUTBOX_OK(agent->RunOnce(clock_.Now() + absl::Milliseconds(20)));
    }
  }

  uint64_t Expired() { return store_->GetStats()->expired_total; }

  testing::FakeClock clock_;
};

TEST_F(AgentClassesTest, ARefundOfPriorityNineLeavesBeforeTheBacklog) {
  EventClass refunds;
  refunds.name = "fiscal";
  refunds.event_types = {"refund.*"};
  refunds.priority = 9;
  refunds.fiscal = true;
  ASSERT_NO_FATAL_FAILURE(OpenWith({Telemetry(absl::ZeroDuration()), refunds}));
  ASSERT_NO_FATAL_FAILURE(StartSink());
  for (int i = 0; i < 200; ++i) CommitOne("telemetry.temp");
  const std::string refund = CommitOne("refund.created");
  std::unique_ptr<Agent> agent = MakeAgent(
      absl::StrReplaceAll(Config(), {{"agent {", "agent { max_in_flight: 1"}}),
      &clock_);
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->Drain());
  const std::vector<testing::SinkLine> log = SinkLog();
  ASSERT_EQ(log.size(), 201u);
  EXPECT_EQ(log[0].id, refund) << "the refund waited behind the telemetry";
}

TEST_F(AgentClassesTest, AJumpOfTheWallClockExpiresNothing) {
  ASSERT_NO_FATAL_FAILURE(OpenWith({Telemetry(absl::Hours(1))}));
  // No sink: the events wait, as on a till offline.
  for (int i = 0; i < 5; ++i) CommitOne("telemetry.temp");
  std::unique_ptr<Agent> agent = MakeAgent(Config(), &clock_);
  ASSERT_NE(agent, nullptr);
  Rounds(agent.get());
  clock_.Set(clock_.Now() + kYear);   // ahead: still "trusted"
  clock_.Advance(absl::Seconds(20));  // past a class check
  Rounds(agent.get());
  EXPECT_EQ(Expired(), 0u) << "a year-long jump counted as a year";
  clock_.Advance(absl::Minutes(61));  // an hour passes for real
  Rounds(agent.get());
  EXPECT_EQ(Expired(), 5u);
  EXPECT_EQ(store_->GetStats()->pending_events, 0u);
  EXPECT_EQ(Logged(LogEvent::kEventsExpired), 1);
}

TEST_F(AgentClassesTest, AClockTheKernelCallsUnsynchronizedExpiresNothing) {
  ASSERT_NO_FATAL_FAILURE(OpenWith({Telemetry(absl::Hours(1))}));
  for (int i = 0; i < 5; ++i) CommitOne("telemetry.temp");
  // A board that booted with a garbage time a year ahead, before NTP.
  clock_.Set(clock_.Now() + kYear);
  clock_.SetSynchronized(false);
  std::unique_ptr<Agent> agent = MakeAgent(Config(), &clock_);
  ASSERT_NE(agent, nullptr);
  Rounds(agent.get());
  clock_.Advance(absl::Seconds(20));
  Rounds(agent.get());
  EXPECT_EQ(Expired(), 0u);
  clock_.SetSynchronized(true);  // the time is right after all
  clock_.Advance(absl::Seconds(20));
  Rounds(agent.get());
  EXPECT_EQ(Expired(), 5u);
}

TEST_F(AgentClassesTest, ExpiryWaitsWhileTheClockIsBehindTheStoresMark) {
  ASSERT_NO_FATAL_FAILURE(OpenWith({Telemetry(absl::Hours(1))}));
  const absl::Time start = clock_.Now();
  const std::string old_reading = CommitOne("telemetry.temp");
  clock_.Advance(absl::Hours(3));
  CommitOne("sale.created");  // the store's mark: start + 3 h
  // Set back 1 h: behind the mark, yet the reading looks 2 h old.
  clock_.Set(start + absl::Hours(2));
  std::unique_ptr<Agent> agent = MakeAgent(Config(), &clock_);
  ASSERT_NE(agent, nullptr);
  Rounds(agent.get());
  clock_.Advance(absl::Seconds(20));
  Rounds(agent.get());
  EXPECT_EQ(Logged(LogEvent::kClockUntrusted), 1);
  EXPECT_EQ(Expired(), 0u);
  ASSERT_OUTBOX_OK(store_->FindPending(old_reading));
  clock_.Set(start + absl::Hours(3) + absl::Minutes(1));  // right again
  clock_.Advance(absl::Seconds(20));
  Rounds(agent.get());
  EXPECT_EQ(Expired(), 1u);
}

// The classes live in the store (Options::event_classes); a configuration
// that names none still runs over them. A workflow whose event type falls in
// an evictable class could lose its event half-way, and its compensation
// would never run: refused whether or not the configuration names classes.
TEST_F(AgentClassesTest, AWorkflowInAnEvictableClassOfTheStoreIsRefused) {
  EventClass orders = Telemetry(absl::Hours(1));
  orders.name = "orders";
  orders.event_types = {"order.*"};
  ASSERT_NO_FATAL_FAILURE(OpenWith({orders}));
  const std::string config = absl::StrCat(Config(), R"(
      workflows { event_type: "order.created"
        steps { name: "reserve" destination: "sink" } })");
  AgentOptions options;
  options.config_text = config;
  options.clock = &clock_;
  auto agent = Agent::Create(store_.get(), std::move(options));
  ASSERT_FALSE(agent.ok()) << "a workflow's events could be evicted";
  EXPECT_EQ(agent.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(agent.status().message().find("order.created"), std::string::npos)
      << agent.status();
  EXPECT_NE(agent.status().message().find("orders"), std::string::npos)
      << agent.status();
}

// Evicted events kept as dead letters (keep_evicted true, the default) are
// said in the log: one events_evicted record for the burst, at the next
// class check, whatever the sink's state.
TEST_F(AgentClassesTest, AnEvictionKeptAsDeadLettersIsLogged) {
  EventClass telemetry = Telemetry(absl::ZeroDuration());
  telemetry.max_pending_events = 3;
  telemetry.on_full = EventClass::OnFull::kDropOldest;
  ASSERT_NO_FATAL_FAILURE(OpenWith({telemetry}));
  // No sink: the events wait, as on a till offline.
  std::unique_ptr<Agent> agent = MakeAgent(Config(), &clock_);
  ASSERT_NE(agent, nullptr);
  Rounds(agent.get());
  for (int i = 0; i < 5; ++i) CommitOne("telemetry.temp");
  clock_.Advance(absl::Seconds(20));  // past a class check
  Rounds(agent.get());
  EXPECT_EQ(store_->GetStats()->dead_letters, 2u);
  int evicted = 0;
  for (const LogRecord& r : agent_log_) {
    if (r.event != LogEvent::kEventsEvicted) continue;
    ++evicted;
    EXPECT_THAT(r.message, ::testing::HasSubstr("2 event(s) evicted"));
  }
  EXPECT_EQ(evicted, 1);
}

// Expiry writes at most 512 events an agent round, so that a day's backlog
// expiring at once does not stop delivery for one long write; the rest go
// in the next rounds, not at the next 10 s check, and the burst is one
// events_expired record.
TEST_F(AgentClassesTest, ExpiryTakes512ARoundAndTheRestInTheNextRounds) {
  ASSERT_NO_FATAL_FAILURE(OpenWith({Telemetry(absl::Hours(1))}));
  Txn txn;  // 600 readings in one commit
  for (int i = 0; i < 600; ++i) {
    Event e;
    e.type = "telemetry.temp";
    e.payload = "{}";
    txn.Emit(e);
  }
  ASSERT_OUTBOX_OK(store_->Commit(txn));
  std::unique_ptr<Agent> agent = MakeAgent(Config(), &clock_);
  ASSERT_NE(agent, nullptr);
  Rounds(agent.get(), 1);
  EXPECT_EQ(Expired(), 0u);
  clock_.Advance(absl::Minutes(61));
  Rounds(agent.get(), 1);
  EXPECT_EQ(Expired(), 512u);
  Rounds(agent.get(), 2);  // the fake clock stands still: no new check is due
  EXPECT_EQ(Expired(), 600u);
  int records = 0;
  for (const LogRecord& r : agent_log_) {
    if (r.event != LogEvent::kEventsExpired) continue;
    ++records;
    EXPECT_THAT(r.message, ::testing::HasSubstr("600 event(s) expired"));
  }
  EXPECT_EQ(records, 1);
}

// A program that opens its store from the agent's configuration file
// (outbox-pos-sim) takes the same store options as outbox-agent: the
// classes and the memory profile; a file it cannot read changes nothing.
TEST(LoadStoreOptionsTest, SetsTheFilesClassesAndMemoryProfile) {
  testing::TempDir dir;
  testing::WritePrivate(dir.Sub("secret"),
                        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  const std::string config = dir.Sub("agent.textproto");
  testing::WritePrivate(config, absl::StrCat(R"(
destinations { name: "sink" url: "http://127.0.0.1:9/" secrets_file: ")",
                                             dir.Sub("secret"), R"(" }
routes { event_type: "*" destination: "sink" }
agent { memory_profile: "small" }
classes { name: "telemetry" event_types: "telemetry.*" priority: 2 })"));
  Options options;
  options.tables = {"sales"};
  ASSERT_OUTBOX_OK(LoadStoreOptions(config, &options));
  EXPECT_EQ(options.memory_profile, Options::MemoryProfile::kSmall);
  ASSERT_EQ(options.event_classes.size(), 1u);
  EXPECT_EQ(options.event_classes[0].name, "telemetry");
  EXPECT_EQ(options.event_classes[0].priority, 2);
  EXPECT_EQ(options.tables, std::vector<std::string>{"sales"});

  Options untouched;
  EXPECT_FALSE(LoadStoreOptions(dir.Sub("missing.textproto"), &untouched).ok());
  EXPECT_EQ(untouched.memory_profile, Options::MemoryProfile::kDefault);
  EXPECT_TRUE(untouched.event_classes.empty());
}

}  // namespace
}  // namespace outbox
