// Copyright (c) edge-outbox authors.
//
// The agent and the network: an unreachable receiver is not a failed
// attempt and costs next to no CPU; the queue drains when it comes back;
// HTTPS verification is on, and works with the receiver's CA configured.

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/status.h"
#include "tests/testing/test_certs.h"

namespace outbox {
namespace {

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return absl::ToDoubleSeconds(absl::DurationFromTimeval(usage.ru_utime) +
                               absl::DurationFromTimeval(usage.ru_stime));
}

// Waits (bounded, to catch hangs) until `pred` holds.
template <typename Pred>
bool WaitFor(Pred pred, absl::Duration limit = absl::Seconds(60)) {
  const absl::Time end = absl::Now() + limit;
  while (absl::Now() < end) {
    if (pred()) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return pred();
}

class AgentNetworkTest : public testing::AgentSinkTest {};

TEST_F(AgentNetworkTest, OfflineConsumesNoAttemptsAndNoCpuThenDrains) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const int port = port_;
  StopSink();  // the receiver is down: its port refuses connections
  const std::vector<std::string> ids = CommitEvents(50, /*keys=*/5);
  auto agent = MakeAgent(Config());
  ASSERT_NE(agent, nullptr);

  std::thread runner([&] { EXPECT_OUTBOX_OK(agent->Run()); });
  absl::SleepFor(absl::Milliseconds(500));  // let it find out
  const double cpu_before = CpuSeconds();
  absl::SleepFor(absl::Seconds(10));
  const double offline_cpu = CpuSeconds() - cpu_before;
  std::printf("CPU time of the whole test process over 10 s offline: %.4f s\n",
              offline_cpu);
  auto pending = store_->ListPending(100);
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(pending->size(), ids.size());
  for (const PendingEvent& e : *pending) {
    EXPECT_EQ(e.attempts, 0u) << "offline must not count as an attempt";
  }
  // Emulated CPUs (qemu-user) run the same work many times slower, so the
  // budget is only meaningful natively.
  if (std::getenv("OUTBOX_TEST_EMULATED") == nullptr) {
    EXPECT_LT(offline_cpu, 0.05);
  }

  StartSink({}, port);  // the receiver is back
  EXPECT_TRUE(WaitFor([&] { return store_->GetStats()->pending_events == 0; }));
  agent->Stop();
  runner.join();

  const AgentStats stats = agent->stats();
  EXPECT_GE(stats.offline_results, 1u);
  EXPECT_EQ(stats.retries_scheduled, 0u);
  EXPECT_EQ(stats.delivered, ids.size());
  std::set<std::string> received;
  for (const testing::SinkLine& l : SinkLog()) {
    EXPECT_FALSE(l.duplicate);
    received.insert(l.id);
  }
  EXPECT_EQ(received.size(), ids.size());
}

TEST_F(AgentNetworkTest, StopAbandonsNothingItMarked) {
  StartSink({"--delay-ms", "3000"});  // answers only after Stop
  CommitEvents(3);
  AgentOptions options;
  options.config_text = Config();
  options.shutdown_grace = absl::Milliseconds(100);
  auto agent = Agent::Create(store_.get(), std::move(options));
  ASSERT_OUTBOX_OK(agent);
  std::thread runner([&] { EXPECT_OUTBOX_OK((*agent)->Run()); });
  absl::SleepFor(absl::Milliseconds(500));  // requests are out by now
  (*agent)->Stop();
  runner.join();
  // The sink had not answered: nothing may be marked delivered.
  EXPECT_EQ(store_->GetStats()->pending_events, 3u);
  EXPECT_EQ((*agent)->stats().requests, 3u);
  EXPECT_EQ((*agent)->stats().delivered, 0u);
}

class AgentTlsTest : public testing::AgentSinkTest {
 protected:
  void SetUp() override {
    AgentSinkTest::SetUp();
    ASSERT_OUTBOX_OK(testing::MakeTestCerts(dir_.path(), &certs_));
    StartSink(
        {"--tls-cert", certs_.server_cert, "--tls-key", certs_.server_key});
  }

  std::string TlsConfig(const std::string& tls) const {
    return absl::StrCat(R"(
      destinations {
        name: "sink"
        url: "https://127.0.0.1:)",
                        port_, R"(/"
        secrets_file: ")",
                        secret_path_, R"("
        )",
                        tls, R"(
      }
      routes { event_type: "*" destination: "sink" }
      retry { base_delay: "10m" max_delay: "10m" }
    )");
  }

  testing::TestCerts certs_;
};

TEST_F(AgentTlsTest, DeliversWithTheReceiversCaConfigured) {
  const std::vector<std::string> ids = CommitEvents(5);
  auto agent = MakeAgent(
      TlsConfig(absl::StrCat(R"(tls { ca_file: ")", certs_.ca_cert, R"(" })")));
  ASSERT_NE(agent, nullptr);
  auto pending = agent->Drain();
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, 0u);
  EXPECT_EQ(SinkLog().size(), ids.size());
}

TEST_F(AgentTlsTest, UntrustedCertificateHoldsEventsWithoutAnAttempt) {
  CommitEvents(1);
  auto agent = MakeAgent(TlsConfig(""));  // system CAs only
  ASSERT_NE(agent, nullptr);
  auto pending = agent->Drain();
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, 1u);
  EXPECT_TRUE(SinkLog().empty()) << "no request may reach an unverified peer";
  auto events = store_->ListPending(1);
  ASSERT_OUTBOX_OK(events);
  ASSERT_EQ(events->size(), 1u);
  const PendingEvent& e = (*events)[0];
  // Not an attempt: the request cannot have left before the handshake
  // verified the peer. The event waits as for an unreachable receiver, so a
  // wrong CA dead-letters nothing, and the log says what to fix.
  EXPECT_EQ(e.attempts, 0u);
  EXPECT_TRUE(e.last_error.empty()) << e.last_error;
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);
  EXPECT_EQ(agent->stats().dead_lettered, 0u);
  bool named = false;
  for (const LogRecord& r : agent_log_) {
    named |= r.event == LogEvent::kDestinationUnreachable &&
             absl::StrContains(r.message, "TLS verification failed") &&
             absl::StrContains(r.message, "ca_file");
  }
  EXPECT_TRUE(named) << "no log line names the TLS problem";
}

}  // namespace
}  // namespace outbox
