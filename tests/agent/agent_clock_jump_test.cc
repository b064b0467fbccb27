// Copyright (c) edge-outbox authors.
//
// The agent when the wall clock jumps six years either way (issue 11, item
// 6), in process: the recording transport is the receiver and time is a fake
// clock whose Set() moves only the wall clock, as NTP correcting a board
// that booted with a stale time (fake-hwclock) does.
//   - Set back: retries scheduled at real time are not stalled for years,
//     whether the agent keeps running or restarts with the stale clock.
//   - Set forward: attempts recorded in the past do not make the next
//     failure a dead letter; only max_attempts or max_age of real retrying
//     end an event.
//   - Probes and the retry timer run on the monotonic clock.
// The agent here runs with clock_tolerance "0": these tests are about the
// schedule, which must not depend on the wall clock. By default a clock set
// back behind the store's newest time holds HTTP deliveries until it is
// right again (agent_field_test, outbox_agent_faketime_test).

#include <poll.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "tests/testing/in_process_agent.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using testing::Answer;
using testing::MakeEvent;

constexpr absl::Duration kSixYears = absl::Hours(6 * 365 * 24);
constexpr int kEvents = 5;

// One receiver, retried as `retry` (the fields of a retry block) says, and
// probed every 1 s to 8 s when unreachable.
std::string Config(const std::string& retry) {
  return absl::StrCat(R"(
    destinations { name: "sink" url: "http://sink.test/" }
    routes { event_type: "*" destination: "sink" }
    agent {
      probe_interval_min: "1s" probe_interval_max: "8s" clock_tolerance: "0"
    }
    retry { )",
                      retry, " }");
}

// Retries within a second.
constexpr char kFastRetry[] = R"(base_delay: "1s" max_delay: "1s")";

class AgentClockJumpTest : public testing::InProcessAgentTest {
 protected:
  // Each event's attempts as the receiver logged them, by webhook id.
  std::map<std::string, int> Received() const {
    std::map<std::string, int> by_id;
    for (const testing::ReceivedRequest& r : receiver_->log()) {
      ++by_id[r.webhook_id];
    }
    return by_id;
  }

  // Attempts each pending event has failed, in commit order.
  std::vector<uint32_t> Attempts() {
    std::vector<uint32_t> attempts;
    auto pending = store_->ListPending(100);
    EXPECT_TRUE(pending.ok()) << pending.status();
    if (!pending.ok()) return attempts;
    for (const PendingEvent& e : *pending) attempts.push_back(e.attempts);
    return attempts;
  }

  void SetWallClock(absl::Duration by) { clock_.Set(clock_.Now() + by); }

  // Commits kEvents and makes an agent that fails each once (503) and is
  // answered 200 from then on: a device that attempted at real time, before
  // its clock went wrong. Null if that did not go as planned.
  std::unique_ptr<Agent> FailEachOnceThenHeal() {
    AnswerAlways(Answer::kOk);
    receiver_->Script(std::vector<Answer>(kEvents, Answer::kServerError));
    for (int i = 0; i < kEvents; ++i) CommitEvent(MakeEvent("sale"));
    auto agent = MakeAgent(Config(kFastRetry));
    if (agent == nullptr) return nullptr;
    const uint64_t requests = RequestsNow(agent.get());
    const uint64_t retries = agent->stats().retries_scheduled;
    EXPECT_EQ(requests, static_cast<uint64_t>(kEvents));
    EXPECT_EQ(retries, static_cast<uint64_t>(kEvents));
    return requests == kEvents && retries == kEvents ? std::move(agent)
                                                     : nullptr;
  }

  // Commits `events` and makes an agent on Config(`retry`) whose receiver
  // fails every request (503); their first attempts are made while the
  // clock says six years ago, then NTP sets it right. Null if that did not
  // go as planned.
  std::unique_ptr<Agent> FirstAttemptsSixYearsAgo(int events,
                                                  const std::string& retry) {
    AnswerAlways(Answer::kServerError);
    SetWallClock(-kSixYears);
    for (int i = 0; i < events; ++i) CommitEvent(MakeEvent("sale"));
    auto agent = MakeAgent(Config(retry));
    if (agent == nullptr) return nullptr;
    const uint64_t requests = RequestsNow(agent.get());
    EXPECT_EQ(requests, static_cast<uint64_t>(events));
    SetWallClock(kSixYears);
    return requests == static_cast<uint64_t>(events) ? std::move(agent)
                                                     : nullptr;
  }
};

TEST_F(AgentClockJumpTest, ClockSetBackWhileRunningStillDeliversTheRetries) {
  auto agent = FailEachOnceThenHeal();
  ASSERT_NE(agent, nullptr);
  SetWallClock(-kSixYears);
  clock_.Advance(absl::Seconds(1));  // the longest retry delay
  auto left = agent->Drain();
  ASSERT_OUTBOX_OK(left);
  EXPECT_EQ(*left, 0u);
  EXPECT_EQ(agent->stats().delivered, static_cast<uint64_t>(kEvents));
  for (const auto& [id, requests] : Received()) EXPECT_EQ(requests, 2) << id;
}

TEST_F(AgentClockJumpTest, RestartWithClockSetBackDeliversWithinTheRetryDelay) {
  auto agent = FailEachOnceThenHeal();
  ASSERT_NE(agent, nullptr);
  agent.reset();
  SetWallClock(-kSixYears);  // boots with a stale clock
  Reopen();
  agent = MakeAgent(Config(kFastRetry));
  ASSERT_NE(agent, nullptr);
  clock_.Advance(absl::Seconds(1));
  auto left = agent->Drain();
  ASSERT_OUTBOX_OK(left);
  EXPECT_EQ(*left, 0u);
  EXPECT_EQ(receiver_->log().size(), 2u * kEvents);
  for (const auto& [id, requests] : Received()) EXPECT_EQ(requests, 2) << id;
}

// Issue 11, item 6, "clock set back": the retries were due before the
// restart; after a restart with the clock set back, a drain (what
// `outbox-agent --drain-and-exit` does) delivers them all. (Found with the
// store making each wait its whole delay again from the open.)
TEST_F(AgentClockJumpTest,
       DrainRightAfterRestartWithClockSetBackDeliversDueRetries) {
  auto agent = FailEachOnceThenHeal();
  ASSERT_NE(agent, nullptr);
  agent.reset();
  clock_.Advance(absl::Seconds(1));  // every retry is due now
  SetWallClock(-kSixYears);
  Reopen();
  agent = MakeAgent(Config(kFastRetry));
  ASSERT_NE(agent, nullptr);
  auto left = agent->Drain();
  ASSERT_OUTBOX_OK(left);
  EXPECT_EQ(*left, 0u);
  EXPECT_EQ(receiver_->log().size(), 2u * kEvents);
}

TEST_F(AgentClockJumpTest, ClockSetForwardDoesNotDeadLetterTheNextFailure) {
  auto agent = FirstAttemptsSixYearsAgo(kEvents, kFastRetry);
  ASSERT_NE(agent, nullptr);
  clock_.Advance(absl::Seconds(1));  // every retry is due
  RequestsNow(agent.get());
  EXPECT_EQ(agent->stats().dead_lettered, 0u);
  // Each failed again and is still pending. Due times are whole
  // milliseconds, so a jitter draw under 1 ms is due at once: an event may
  // be an attempt further already.
  const std::vector<uint32_t> attempts = Attempts();
  ASSERT_EQ(attempts.size(), static_cast<size_t>(kEvents));
  for (uint32_t a : attempts) EXPECT_GE(a, 2u);
}

TEST_F(AgentClockJumpTest, ClockSetForwardStillGivesUpAtMaxAttempts) {
  auto agent =
      FirstAttemptsSixYearsAgo(1, absl::StrCat(kFastRetry, " max_attempts: 3"));
  ASSERT_NE(agent, nullptr);
  // A second brings each next attempt (a jitter draw under 1 ms, due at
  // once in whole milliseconds, brings it in the same round).
  for (int i = 0; i < 4 && agent->stats().dead_lettered == 0; ++i) {
    clock_.Advance(absl::Seconds(1));
    RequestsNow(agent.get());
  }
  // Given up at the third attempt, not before, not after.
  EXPECT_EQ(agent->stats().requests, 3u);
  EXPECT_EQ(agent->stats().dead_lettered, 1u);
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_TRUE(absl::StartsWith((*dead)[0].reason, "gave up after 3 attempts"))
      << (*dead)[0].reason;
}

TEST_F(AgentClockJumpTest, ClockSetForwardGivesUpOnlyAfterMaxAgeOfRetrying) {
  // Retries at most a minute apart, so a minute is the most one gap (the
  // jump's included) can add to the retry age.
  auto agent = FirstAttemptsSixYearsAgo(
      1, R"(base_delay: "1s" max_delay: "1m" max_retry_after: "1m"
            max_age: "1h")");
  ASSERT_NE(agent, nullptr);
  // Each minute one more failed attempt; the retry age grows by a minute
  // each, the six years included, and reaches max_age at the 61st attempt.
  for (int attempt = 2; attempt <= 60; ++attempt) {
    clock_.Advance(absl::Minutes(1));
    ASSERT_EQ(RequestsNow(agent.get()), 1u) << "attempt " << attempt;
    ASSERT_EQ(agent->stats().dead_lettered, 0u) << "attempt " << attempt;
  }
  clock_.Advance(absl::Minutes(1));
  ASSERT_EQ(RequestsNow(agent.get()), 1u);
  EXPECT_EQ(agent->stats().dead_lettered, 1u);
}

TEST_F(AgentClockJumpTest, ProbesKeepTheirIntervalWhenTheClockJumps) {
  CommitEvent(MakeEvent("sale"));  // the receiver is unreachable
  auto agent = MakeAgent(Config(kFastRetry));
  ASSERT_NE(agent, nullptr);
  ASSERT_EQ(RequestsNow(agent.get()), 1u);  // unreachable from now on
  for (absl::Duration jump : {-kSixYears, 2 * kSixYears, -kSixYears}) {
    SetWallClock(jump);
    EXPECT_EQ(RequestsNow(agent.get()), 0u) << "probed at the jump";
  }
  int seconds = 1;
  for (absl::Duration jump : {-kSixYears, kSixYears, kSixYears}) {
    SCOPED_TRACE(absl::FormatDuration(jump));
    SetWallClock(jump);
    clock_.Advance(absl::Seconds(seconds) - absl::Milliseconds(1));
    EXPECT_EQ(RequestsNow(agent.get()), 0u) << "probed too early";
    clock_.Advance(absl::Milliseconds(1));
    EXPECT_EQ(RequestsNow(agent.get()), 1u) << "no probe when due";
    seconds *= 2;
  }
}

TEST_F(AgentClockJumpTest, RetryTimerWakesTheAgentAfterTheClockIsSetBack) {
  auto agent = FailEachOnceThenHeal();
  ASSERT_NE(agent, nullptr);
  SetWallClock(-kSixYears);
  ASSERT_OUTBOX_OK(agent->RunOnce());  // arms the timer for the next retry
  // The timer is real (timerfd) and the retry at most 1 s away: the agent's
  // fd is readable within it (10 s only bounds a hang), not in six years.
  pollfd p{agent->fd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, /*timeout_ms=*/10000), 1) << "the timer never fired";
}

}  // namespace
}  // namespace outbox
