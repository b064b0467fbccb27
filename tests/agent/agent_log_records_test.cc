// Copyright (c) edge-outbox authors.
//
// The records the agent hands to AgentOptions::log for the state changes an
// end-to-end run cannot easily show: the store it opens, a full disk, a
// resumed destination. In process: a store over the fault-injecting file
// system, the recording transport and a fake clock.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/store_impl.h"
#include "outbox/agent.h"
#include "outbox/log.h"
#include "tests/fault_fs/crash_test_env.h"
#include "tests/fault_fs/fault_injection_fs.h"
#include "tests/testing/events.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/recording_transport.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

constexpr char kConfig[] = R"(
  destinations { name: "sink" url: "http://sink.test/" }
  routes { event_type: "*" destination: "sink" }
)";

class AgentLogRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = std::make_shared<testing::FaultInjectionFileSystem>();
    env_ = testing::NewCrashTestEnv(fs_);
    Options options;
    options.tables = {"sales"};
    options.clock = &clock_;
    auto store = OpenStoreWithEnv(options, dir_.Sub("db"), env_.get());
    ASSERT_OUTBOX_OK(store);
    store_ = std::move(*store);
  }

  void Commit(int n) {
    for (int i = 0; i < n; ++i) {
      Txn txn;
      txn.Emit(testing::MakeEvent("sale.created"));
      ASSERT_OUTBOX_OK(store_->Commit(txn));
    }
  }

  std::unique_ptr<Agent> MakeAgent() {
    AgentOptions options;
    options.config_text = kConfig;
    options.clock = &clock_;
    options.watch_network = false;
    options.transport = std::make_unique<testing::RecordingTransport>(
        &receiver_, [] { return true; });
    options.log = [this](const LogRecord& r) { log_.push_back(r); };
    auto agent = Agent::Create(store_.get(), std::move(options));
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? std::move(*agent) : nullptr;
  }

  std::vector<LogRecord> Logged(LogEvent event) const {
    std::vector<LogRecord> found;
    for (const LogRecord& r : log_) {
      if (r.event == event) found.push_back(r);
    }
    return found;
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  std::shared_ptr<testing::FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<Store> store_;
  testing::Receiver receiver_{/*seed=*/1};
  std::vector<LogRecord> log_;
};

TEST_F(AgentLogRecordsTest, StoreOpenedIsTheFirstRecordAndCountsThePending) {
  Commit(3);
  auto agent = MakeAgent();
  ASSERT_NE(agent, nullptr);
  ASSERT_FALSE(log_.empty());
  EXPECT_EQ(log_[0].event, LogEvent::kStoreOpened);
  EXPECT_EQ(log_[0].time, clock_.Now());
  EXPECT_TRUE(absl::StrContains(log_[0].message, "3 event(s) pending"))
      << log_[0].message;
  EXPECT_TRUE(absl::StrContains(log_[0].message, "0 dead letter(s)"))
      << log_[0].message;
}

TEST_F(AgentLogRecordsTest, FullDiskIsOneErrorRecordPerPause) {
  Commit(4);
  auto agent = MakeAgent();
  ASSERT_NE(agent, nullptr);
  testing::ErrorInjection full;
  full.error = testing::ErrorInjection::Error::kNoSpace;
  fs_->InjectErrors(full);
  // Sends, then fails to write the answers; the rounds after it wait.
  for (int i = 0; i < 5; ++i) ASSERT_OUTBOX_OK(agent->RunOnce());
  const std::vector<LogRecord> records = Logged(LogEvent::kDiskFull);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].severity, LogSeverity::kError);
  fs_->ClearErrors();
}

TEST_F(AgentLogRecordsTest, ResumingADestinationIsLogged) {
  auto agent = MakeAgent();
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->ResumeDestination("sink"));
  const std::vector<LogRecord> records = Logged(LogEvent::kDestinationResumed);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].destination, "sink");
}

// A receiver answering 503 to a backlog: ten retry_scheduled records a
// minute for the destination, then one log_suppressed with the rest. (A
// full-jitter retry drawn under 1 ms is due at once, so an event may have
// been tried twice: the counts follow the requests the receiver saw.)
TEST_F(AgentLogRecordsTest, RetriesOfABacklogAreTenRecordsAMinuteThenACount) {
  Commit(100);
  receiver_.Script(
      std::vector<testing::Answer>(200, testing::Answer::kServerError));
  auto agent = MakeAgent();
  ASSERT_NE(agent, nullptr);
  for (int i = 0; i < 30 && receiver_.log().size() < 100; ++i) {
    ASSERT_OUTBOX_OK(agent->RunOnce());
  }
  const size_t failed = receiver_.log().size();
  ASSERT_GE(failed, 100u) << "every event tried";
  EXPECT_EQ(Logged(LogEvent::kRetryScheduled).size(), 10u);
  EXPECT_TRUE(Logged(LogEvent::kLogSuppressed).empty()) << "not before stop";
  agent->Stop();
  ASSERT_OUTBOX_OK(agent->RunOnce());
  ASSERT_EQ(receiver_.log().size(), failed) << "nothing sent while stopping";
  const std::vector<LogRecord> held = Logged(LogEvent::kLogSuppressed);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].destination, "sink");
  EXPECT_TRUE(absl::StrContains(
      held[0].message, absl::StrCat(failed - 10, " more retry_scheduled")))
      << held[0].message;
}

// After the minute, the next retry is written again, after the count of
// what the minute held back.
TEST_F(AgentLogRecordsTest, TheNextMinuteWritesAgainAfterTheCount) {
  Commit(20);
  receiver_.Script(
      std::vector<testing::Answer>(80, testing::Answer::kServerError));
  auto agent = MakeAgent();
  ASSERT_NE(agent, nullptr);
  for (int i = 0; i < 30 && receiver_.log().size() < 20; ++i) {
    ASSERT_OUTBOX_OK(agent->RunOnce());
  }
  const size_t first_minute = receiver_.log().size();
  ASSERT_GE(first_minute, 20u);
  ASSERT_EQ(Logged(LogEvent::kRetryScheduled).size(), 10u);
  clock_.Advance(absl::Minutes(2));
  for (int i = 0; i < 30 && receiver_.log().size() == first_minute; ++i) {
    ASSERT_OUTBOX_OK(agent->RunOnce());
  }
  const std::vector<LogRecord> held = Logged(LogEvent::kLogSuppressed);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_TRUE(absl::StrContains(
      held[0].message,
      absl::StrCat(first_minute - 10, " more retry_scheduled")))
      << held[0].message;
  // The new minute's first retries (up to ten) are written again.
  const size_t retried = receiver_.log().size() - first_minute;
  ASSERT_GT(retried, 0u);
  EXPECT_EQ(Logged(LogEvent::kRetryScheduled).size(),
            10 + std::min<size_t>(retried, 10));
}

}  // namespace
}  // namespace outbox
