// Copyright (c) edge-outbox authors.
//
// The dead-letter fuse (agent/dead_letter_fuse.h, docs/transports.md): a
// receiver that answers 400 to every request, as one built on the Standard
// Webhooks guide does to a bad signature or a stale timestamp, dead-letters
// at most dead_letter_fuse events; the rest are held, one probe at a time,
// and delivered once each when it accepts again. In process: the recording
// transport's receiver scripts the answers, the fake clock moves the probes.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "tests/testing/in_process_agent.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using testing::Answer;
using testing::MakeEvent;

constexpr int kEvents = 30;

class AgentFuseTest : public testing::InProcessAgentTest {
 protected:
  std::unique_ptr<Agent> Start(const std::string& destination_extra) {
    for (int i = 0; i < kEvents; ++i) CommitEvent(MakeEvent("sale"));
    AnswerAlways(Answer::kOk);
    // Every request rejected until the test clears the script.
    receiver_->Script(std::vector<Answer>(1000, Answer::kBadRequest));
    return MakeAgent(absl::StrCat(R"(
      destinations { name: "sink" url: "http://sink.test/" )",
                                  destination_extra, R"( }
      routes { event_type: "*" destination: "sink" }
      agent { probe_interval_min: "1s" probe_interval_max: "8s" })"));
  }

  void Rounds(Agent* agent, int n, absl::Duration step) {
    for (int i = 0; i < n; ++i) {
      ASSERT_OUTBOX_OK(agent->RunOnce());
      clock_.Advance(step);
    }
  }

  int Logged(LogEvent event) const {
    int n = 0;
    for (const LogRecord& r : log_) n += r.event == event;
    return n;
  }

  // How many requests each event had, from the `from`th request on.
  std::map<std::string, int> Tried(size_t from = 0) const {
    std::map<std::string, int> n;
    const auto& log = receiver_->log();
    for (size_t i = from; i < log.size(); ++i) ++n[log[i].webhook_id];
    return n;
  }

  // How many times each event was answered 2xx.
  std::map<std::string, int> Accepted() const {
    std::map<std::string, int> n;
    for (const auto& r : receiver_->log()) {
      if (r.answer == Answer::kOk) ++n[r.webhook_id];
    }
    return n;
  }
};

TEST_F(AgentFuseTest, AReceiverRejectingEverythingDeadLettersAtMostTheFuse) {
  std::unique_ptr<Agent> agent = Start("");
  ASSERT_NE(agent, nullptr);
  ASSERT_NO_FATAL_FAILURE(Rounds(agent.get(), 30, absl::Seconds(2)));
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->dead_letters, 10u);
  EXPECT_EQ(stats->pending_events, static_cast<uint64_t>(kEvents - 10));
  EXPECT_EQ(agent->stats().dead_lettered, 10u);
  EXPECT_EQ(Logged(LogEvent::kDeadLetterFuse), 1);
  // Held, one probe at a time: a few requests over a minute, not a storm.
  const size_t requests = receiver_->log().size();
  ASSERT_NO_FATAL_FAILURE(Rounds(agent.get(), 6, absl::Seconds(10)));
  EXPECT_LE(receiver_->log().size(), requests + 6);

  receiver_->ClearScript();  // the receiver is fixed: it accepts again
  ASSERT_NO_FATAL_FAILURE(Rounds(agent.get(), 30, absl::Seconds(9)));
  stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 0u);
  EXPECT_EQ(stats->dead_letters, 10u);
  const std::map<std::string, int> accepted = Accepted();
  EXPECT_EQ(accepted.size(), static_cast<size_t>(kEvents - 10));
  for (const auto& [id, n] : accepted) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(Logged(LogEvent::kDestinationReachable), 1);
}

// Only a delivery releases it: a receiver rejecting everything with an
// occasional 503 in between does not get ten more each time, and what it
// rejects while held is a failed attempt, never a dead letter.
TEST_F(AgentFuseTest, ARetrysAnswerNeitherCountsNorResetsIt) {
  std::unique_ptr<Agent> agent = Start("");
  ASSERT_NE(agent, nullptr);
  ASSERT_NO_FATAL_FAILURE(Rounds(agent.get(), 30, absl::Seconds(2)));
  ASSERT_EQ(store_->GetStats()->dead_letters, 10u);
  receiver_->ClearScript();
  std::vector<Answer> script;
  for (int i = 0; i < 50; ++i) {
    script.push_back(i % 3 == 0 ? Answer::kServerError : Answer::kBadRequest);
  }
  receiver_->Script(script);
  ASSERT_NO_FATAL_FAILURE(Rounds(agent.get(), 40, absl::Seconds(9)));
  EXPECT_EQ(store_->GetStats()->dead_letters, 10u);
  EXPECT_EQ(store_->GetStats()->pending_events,
            static_cast<uint64_t>(kEvents - 10));
  EXPECT_EQ(Logged(LogEvent::kDestinationReachable), 0);
  EXPECT_EQ(Logged(LogEvent::kDeadLetterFuse), 1);
  // Probes moved on: more than one held event was tried.
  EXPECT_GT(Tried().size(), 11u);
}

// While the fuse holds, a refused probe is a failed attempt, due again after
// its backoff, so the next probe is another event: a few events the
// receiver will never take cannot hold the destination for good.
TEST_F(AgentFuseTest, ARefusedProbeWaitsItsBackoffAndTheNextProbeIsAnother) {
  std::unique_ptr<Agent> agent = Start("dead_letter_fuse: 2");
  ASSERT_NE(agent, nullptr);
  ASSERT_NO_FATAL_FAILURE(Rounds(agent.get(), 3, absl::Seconds(2)));
  ASSERT_EQ(store_->GetStats()->dead_letters, 2u);
  ASSERT_EQ(Logged(LogEvent::kDeadLetterFuse), 1);
  const size_t tripped_at = receiver_->log().size();
  ASSERT_NO_FATAL_FAILURE(Rounds(agent.get(), 40, absl::Seconds(9)));
  EXPECT_GT(Tried(tripped_at).size(), 3u)
      << "the probes kept to the same events";
  EXPECT_EQ(store_->GetStats()->dead_letters, 2u);
}

TEST_F(AgentFuseTest, ZeroTurnsTheFuseOff) {
  std::unique_ptr<Agent> agent = Start("dead_letter_fuse: 0");
  ASSERT_NE(agent, nullptr);
  ASSERT_NO_FATAL_FAILURE(Rounds(agent.get(), 30, absl::Seconds(2)));
  EXPECT_EQ(store_->GetStats()->dead_letters, static_cast<uint64_t>(kEvents));
  EXPECT_EQ(Logged(LogEvent::kDeadLetterFuse), 0);
}

TEST_F(AgentFuseTest, ADestinationSetsItsOwnFuse) {
  std::unique_ptr<Agent> agent = Start("dead_letter_fuse: 3");
  ASSERT_NE(agent, nullptr);
  ASSERT_NO_FATAL_FAILURE(Rounds(agent.get(), 30, absl::Seconds(2)));
  EXPECT_EQ(store_->GetStats()->dead_letters, 3u);
  EXPECT_EQ(Logged(LogEvent::kDeadLetterFuse), 1);
}

}  // namespace
}  // namespace outbox
