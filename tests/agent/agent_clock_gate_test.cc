// Copyright (c) edge-outbox authors.
//
// The clock gate at the agent (docs/operations.md, "Wrong clocks"): while
// the wall clock is not trusted (behind the store's newest time by more
// than clock_tolerance, or, with require_synchronized_clock, unsynchronized
// by the kernel's word) an HTTP destination's events are held, not
// attempted; the agent looks again every second, also while idle, and
// resumes by itself once the clock is right. In process: the recording
// transport is the receiver and the clock a fake one that only the test
// moves. Waits are bounded only to catch hangs.

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "tests/testing/in_process_agent.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using testing::Answer;
using testing::MakeEvent;

constexpr char kRequireSynchronized[] = R"(
  destinations { name: "sink" url: "http://sink.test/" }
  routes { event_type: "*" destination: "sink" }
  agent { require_synchronized_clock: true }
)";

constexpr char kDefaults[] = R"(
  destinations { name: "sink" url: "http://sink.test/" }
  routes { event_type: "*" destination: "sink" }
)";

class AgentClockGateTest : public testing::InProcessAgentTest {
 protected:
  void SetUp() override {
    InProcessAgentTest::SetUp();
    AnswerAlways(Answer::kOk);
  }

  int Logged(LogEvent event) const {
    int n = 0;
    for (const LogRecord& r : log_) n += r.event == event;
    return n;
  }

  uint64_t Pending() {
    auto stats = store_->GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->pending_events : ~uint64_t{0};
  }
};

TEST_F(AgentClockGateTest,
       AnUnsynchronizedClockHoldsWhenSynchronizationIsRequired) {
  clock_.SetSynchronized(false);  // NTP has not answered since the boot
  const std::string id = CommitEvent(MakeEvent("sale"));
  auto agent = MakeAgent(kRequireSynchronized);
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(RequestsNow(agent.get()), 0u) << "sent on an unsynchronized clock";
  EXPECT_TRUE(receiver_->log().empty());
  EXPECT_EQ(Logged(LogEvent::kClockUntrusted), 1);
  auto held = store_->FindPending(id);
  ASSERT_OUTBOX_OK(held);
  EXPECT_EQ(held->attempts, 0u);  // not an attempt

  clock_.SetSynchronized(true);  // NTP answered
  EXPECT_EQ(RequestsNow(agent.get()), 1u);
  EXPECT_EQ(Logged(LogEvent::kClockTrusted), 1);
  ASSERT_EQ(receiver_->log().size(), 1u);
  EXPECT_EQ(receiver_->log()[0].webhook_id, id);
  EXPECT_EQ(Pending(), 0u);
}

// The agent's own loop (Run, on a thread of its own) with the clock set
// back behind the store's mark: once the first round has held the event,
// nothing but the agent's recheck timer can wake it (no commit, no answer
// due, no probe; the next housekeeping is an hour away), so the delivery
// after the clock is set right shows it looked again by itself.
TEST_F(AgentClockGateTest, AnIdleAgentResumesByItselfOnceTheClockIsRight) {
  const absl::Time right = clock_.Now();
  const std::string id = CommitEvent(MakeEvent("sale"));  // the store's mark
  clock_.Set(right - absl::Hours(1));  // a reboot without an RTC
  absl::Mutex mu;
  bool held = false;
  AgentOptions options;
  options.config_text = kDefaults;
  options.clock = &clock_;
  options.watch_network = false;
  options.transport = std::make_unique<testing::RecordingTransport>(
      receiver_.get(), [] { return true; });
  options.log = [&](const LogRecord& r) {
    absl::MutexLock l(&mu);
    held = held || r.event == LogEvent::kClockUntrusted;
  };
  auto agent = Agent::Create(store_.get(), std::move(options));
  ASSERT_OUTBOX_OK(agent);
  std::thread runner([&] { EXPECT_OUTBOX_OK((*agent)->Run()); });
  {
    absl::MutexLock l(&mu);
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&held), absl::Seconds(30)))
        << "the first round did not find the clock untrusted";
  }
  clock_.Set(right);  // NTP sets it right; nothing wakes the agent
  const absl::Time guard = absl::Now() + absl::Seconds(30);
  while (Pending() > 0 && absl::Now() < guard) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  const uint64_t pending = Pending();
  (*agent)->Stop();
  runner.join();
  EXPECT_EQ(pending, 0u) << "the idle agent never looked at the clock again";
  ASSERT_EQ(receiver_->log().size(), 1u);
  EXPECT_EQ(receiver_->log()[0].webhook_id, id);
}

}  // namespace
}  // namespace outbox
