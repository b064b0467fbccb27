// Copyright (c) edge-outbox authors.
//
// The agent's metrics file, in process: what it counts (attempts by outcome,
// dead letters by reason, delivery and commit latency, time unreachable),
// when it is rewritten (on the loop's timer, every metrics_interval of the
// fake clock), and that a failed write is logged and stops nothing. The
// receiver is the recording transport; time is a fake clock.

#include <poll.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "tests/testing/in_process_agent.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using testing::Answer;
using testing::MakeEvent;

class AgentMetricsTest : public testing::InProcessAgentTest {
 protected:
  std::string metrics_path() const { return dir_.Sub("outbox.prom"); }

  // `retry` goes inside the retry block.
  std::string Config(const std::string& interval = "10s",
                     const std::string& retry = "") const {
    return absl::StrCat(R"(
      destinations { name: "sink" url: "http://sink.test/" }
      routes { event_type: "*" destination: "sink" }
      retry { base_delay: "1h" max_delay: "1h" )",
                        retry, R"( }
      agent { metrics_file: ")",
                        metrics_path(), "\" metrics_interval: \"", interval,
                        "\" }\n");
  }

  // The value of the sample written exactly as `sample` ("name" or
  // "name{label=\"v\"}") in the metrics file; -1 if it is not there.
  double Sample(const std::string& sample) const {
    std::ifstream in(metrics_path());
    std::string line;
    while (std::getline(in, line)) {
      if (!absl::StartsWith(line, sample + " ")) continue;
      double value = -1;
      EXPECT_TRUE(absl::SimpleAtod(line.substr(sample.size() + 1), &value))
          << line;
      return value;
    }
    return -1;
  }

  // Lets the metrics interval pass and runs a round: the file is rewritten.
  void NextInterval(Agent* agent, absl::Duration interval = absl::Seconds(10)) {
    clock_.Advance(interval);
    ASSERT_OUTBOX_OK(agent->RunOnce());
  }
};

TEST_F(AgentMetricsTest, CountsAttemptsByOutcomeAndDeadLettersByReason) {
  AnswerAlways(Answer::kOk);
  receiver_->Script({Answer::kOk, Answer::kServerError, Answer::kBadRequest,
                     Answer::kLostAnswer});
  for (int i = 0; i < 4; ++i) CommitEvent(MakeEvent("sale"));
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  ASSERT_EQ(RequestsNow(agent.get()), 4u);  // sent, then answered
  // Retries are jittered over (0, 1h]: one may fall due within the interval
  // and be started in the round that writes the figures.
  const uint64_t before = agent->stats().requests;
  NextInterval(agent.get());
  const uint64_t retried = agent->stats().requests - before;
  EXPECT_EQ(Sample("outbox_attempts_total{outcome=\"2xx\"}"), 1);
  EXPECT_EQ(Sample("outbox_attempts_total{outcome=\"retryable_status\"}"), 1);
  EXPECT_EQ(Sample("outbox_attempts_total{outcome=\"4xx\"}"), 1);
  EXPECT_EQ(Sample("outbox_attempts_total{outcome=\"connection\"}"), 1);
  EXPECT_EQ(Sample("outbox_attempts_total{outcome=\"timeout\"}"), 0);
  EXPECT_EQ(Sample("outbox_attempts_total{outcome=\"410\"}"), 0);
  EXPECT_EQ(Sample("outbox_dead_lettered_total{reason=\"rejected\"}"), 1);
  EXPECT_EQ(Sample("outbox_dead_lettered_total{reason=\"gave_up\"}"), 0);
  // The store's part, as GetStats has it.
  EXPECT_EQ(Sample("outbox_delivered_total"), 1);
  EXPECT_EQ(Sample("outbox_pending_events"), 2);
  EXPECT_EQ(Sample("outbox_dead_letters"), 1);
  EXPECT_EQ(Sample("outbox_in_flight_requests"), retried);
  EXPECT_EQ(Sample("outbox_delivery_latency_seconds_count"), 1);
}

// The gauge is the requests out at the moment the file is written: the
// first round starts three and writes the file before any answer is in;
// the next takes the answers in, and the file after it says none.
TEST_F(AgentMetricsTest, InFlightRequestsAreThoseNotAnsweredYet) {
  AnswerAlways(Answer::kOk);
  for (int i = 0; i < 3; ++i) CommitEvent(MakeEvent("sale"));
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->RunOnce());
  ASSERT_EQ(agent->stats().requests, 3u);
  ASSERT_EQ(agent->stats().delivered, 0u) << "answered in the first round";
  EXPECT_EQ(Sample("outbox_in_flight_requests"), 3);
  ASSERT_OUTBOX_OK(agent->RunOnce());
  ASSERT_EQ(agent->stats().delivered, 3u);
  NextInterval(agent.get());
  EXPECT_EQ(Sample("outbox_in_flight_requests"), 0);
}

// Out of attempts (max_attempts) is its own reason, apart from a receiver's
// rejection: an operator reads it as "the receiver kept failing".
TEST_F(AgentMetricsTest, AnEventOutOfAttemptsIsDeadLetteredAsGaveUp) {
  AnswerAlways(Answer::kServerError);
  CommitEvent(MakeEvent("sale"));
  CommitEvent(MakeEvent("sale"));
  auto agent = MakeAgent(Config("10s", "max_attempts: 1"));
  ASSERT_NE(agent, nullptr);
  ASSERT_EQ(RequestsNow(agent.get()), 2u);
  NextInterval(agent.get());
  EXPECT_EQ(Sample("outbox_attempts_total{outcome=\"retryable_status\"}"), 2);
  EXPECT_EQ(Sample("outbox_dead_lettered_total{reason=\"gave_up\"}"), 2);
  EXPECT_EQ(Sample("outbox_dead_lettered_total{reason=\"rejected\"}"), 0);
  EXPECT_EQ(Sample("outbox_dead_letters"), 2);
}

TEST_F(AgentMetricsTest, CommitsOfTheEmbeddingProcessAreInTheCommitHistogram) {
  AnswerAlways(Answer::kOk);
  for (int i = 0; i < 3; ++i) CommitEvent(MakeEvent("sale"));
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->RunOnce());
  EXPECT_EQ(Sample("outbox_commit_duration_seconds_count"), 3);
  EXPECT_EQ(Sample("outbox_commit_duration_seconds_bucket{le=\"+Inf\"}"), 3);
}

TEST_F(AgentMetricsTest, OfflineRequestsAreNotAttemptsButTimeUnreachable) {
  CommitEvent(MakeEvent("sale"));  // the default receiver: never reached
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  ASSERT_EQ(RequestsNow(agent.get()), 1u);
  NextInterval(agent.get());
  EXPECT_EQ(
      Sample("outbox_destination_info{destination=\"sink\",kind=\"http\"}"), 1);
  EXPECT_EQ(Sample("outbox_destination_reachable{destination=\"sink\"}"), 0);
  EXPECT_EQ(Sample("outbox_destination_paused{destination=\"sink\"}"), 0);
  EXPECT_EQ(Sample("outbox_destination_unreachable_seconds_total{destination="
                   "\"sink\"}"),
            10);
  for (const char* outcome :
       {"2xx", "retryable_status", "timeout", "connection", "4xx", "410"}) {
    EXPECT_EQ(Sample(absl::StrCat("outbox_attempts_total{outcome=\"", outcome,
                                  "\"}")),
              0)
        << outcome;
  }
}

// The drain ETA: each destination's pending events, as the routes take
// them, over the rate it delivered at lately. "sink" delivered 6 events in
// the 10 s before the file is written and has 12 more pending (in flight,
// unanswered); "later" has 3 and delivered none.
TEST_F(AgentMetricsTest, DrainEtaIsPendingOverTheRecentDeliveryRate) {
  AnswerAlways(Answer::kOk);
  for (int i = 0; i < 6; ++i) CommitEvent(MakeEvent("sale"));
  auto agent = MakeAgent(absl::StrCat(Config(), R"(
      destinations { name: "later" url: "http://later.test/" }
      routes { event_type: "audit" destination: "later" })"));
  ASSERT_NE(agent, nullptr);
  ASSERT_EQ(RequestsNow(agent.get()), 6u);
  ASSERT_EQ(agent->stats().delivered, 6u);
  transport_->Hold();
  for (int i = 0; i < 12; ++i) CommitEvent(MakeEvent("sale"));
  for (int i = 0; i < 3; ++i) CommitEvent(MakeEvent("audit"));
  NextInterval(agent.get());
  EXPECT_EQ(Sample("outbox_destination_pending_events{destination=\"sink\"}"),
            12);
  EXPECT_EQ(Sample("outbox_destination_pending_events{destination=\"later\"}"),
            3);
  EXPECT_NEAR(Sample("outbox_destination_delivery_rate{destination=\"sink\"}"),
              0.6, 1e-9);
  EXPECT_NEAR(Sample("outbox_drain_eta_seconds{destination=\"sink\"}"), 20,
              1e-6);
  EXPECT_TRUE(
      std::isinf(Sample("outbox_drain_eta_seconds{destination=\"later\"}")));
  transport_->Release();
}

TEST_F(AgentMetricsTest, FileIsRewrittenOnceTheIntervalHasPassed) {
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->RunOnce());
  ASSERT_TRUE(std::filesystem::exists(metrics_path()));  // at the start
  std::filesystem::remove(metrics_path());
  clock_.Advance(absl::Seconds(10) - absl::Milliseconds(1));
  ASSERT_OUTBOX_OK(agent->RunOnce());
  EXPECT_FALSE(std::filesystem::exists(metrics_path())) << "written too early";
  clock_.Advance(absl::Milliseconds(1));
  ASSERT_OUTBOX_OK(agent->RunOnce());
  EXPECT_TRUE(std::filesystem::exists(metrics_path()))
      << "not written when due";
  EXPECT_FALSE(std::filesystem::exists(metrics_path() + ".tmp"));
}

TEST_F(AgentMetricsTest, IdleAgentIsWokenByItsTimerForTheMetricsFile) {
  // Nothing pending, nothing due: only the metrics file wakes the agent.
  auto agent = MakeAgent(Config("50ms"));
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->RunOnce());
  pollfd p{agent->fd(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, /*timeout_ms=*/30000), 1) << "the timer never fired";
  std::filesystem::remove(metrics_path());
  NextInterval(agent.get(), absl::Milliseconds(50));
  EXPECT_TRUE(std::filesystem::exists(metrics_path()));
}

TEST_F(AgentMetricsTest, FailedWriteIsLoggedOnceAndDeliveryGoesOn) {
  AnswerAlways(Answer::kOk);
  const std::string dir = dir_.Sub("metrics");
  std::filesystem::create_directories(dir);
  const std::string config =
      absl::StrCat(R"(
        destinations { name: "sink" url: "http://sink.test/" }
        routes { event_type: "*" destination: "sink" }
        agent { metrics_file: ")",
                   dir, "/outbox.prom\" metrics_interval: \"10s\" }\n");
  auto agent = MakeAgent(config);
  ASSERT_NE(agent, nullptr);
  std::filesystem::remove_all(dir);  // after the configuration was checked
  CommitEvent(MakeEvent("sale"));
  ASSERT_EQ(RequestsNow(agent.get()), 1u);
  NextInterval(agent.get());
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->delivered_total, 1u);
  int failures = 0;
  for (const LogRecord& r : log_) {
    if (r.event == LogEvent::kMetricsFileFailed) ++failures;
  }
  EXPECT_EQ(failures, 1);  // two failed writes, one record
  std::filesystem::create_directories(dir);
  NextInterval(agent.get());
  EXPECT_TRUE(std::filesystem::exists(dir + "/outbox.prom"));
  EXPECT_EQ(log_.back().event, LogEvent::kMetricsFileRecovered)
      << log_.back().message;
}

}  // namespace
}  // namespace outbox
