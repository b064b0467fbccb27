// Copyright (c) edge-outbox authors.
//
// The delivery agent publishing to a real mosquitto broker (Debian's
// package) on a free loopback port, with a subscriber recording every
// message: properties, topics, nothing retained, FIFO per ordering key, no
// hold for a wrong clock (MQTT carries no time), a broker that is down or never
// sends its CONNACK (not an attempt), one stopped mid-drain (nothing lost,
// duplicates carry the same id), a not-authorized PUBACK (held), a link that
// died silently (keepalive), and TLS with client certificates. Waits are
// bounded only to catch hangs; nothing asserts on how fast anything was.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/shifted_clock.h"
#include "tests/testing/status.h"
#include "tests/testing/test_certs.h"
#include "tests/testing/transport_test_util.h"
#include "tools/recorder/mosquitto_broker.h"
#include "tools/recorder/mqtt_recorder.h"

namespace outbox {
namespace {

using recorder::BrokerConfig;
using recorder::MosquittoBroker;
using recorder::MqttRecorder;
using recorder::ReceivedMessage;
using testing::PayloadN;

std::string Property(const ReceivedMessage& m, const std::string& name) {
  for (const auto& [n, v] : m.user_properties) {
    if (n == name) return v;
  }
  return "";
}

using testing::PayloadN;

class AgentMqttTest : public testing::AgentSinkTest {
 protected:
  void StartBroker(const BrokerConfig& config = {}) {
    auto broker = MosquittoBroker::Start(dir_.Sub(""), config);
    ASSERT_OUTBOX_OK(broker);
    broker_ = std::move(*broker);
  }

  void StartRecorder(const std::string& client_id = "") {
    recorder::MqttRecorderOptions options;
    options.port = broker_->plain_port();
    options.filter = "fleet/#";
    options.client_id = client_id;
    auto recorder = MqttRecorder::Start(options);
    ASSERT_OUTBOX_OK(recorder);
    recorder_ = std::move(*recorder);
  }

  // Destination "fleet" on the broker, every type routed to it; `mqtt`
  // and `destination` are appended inside the destination's blocks.
  std::string MqttConfig(const std::string& mqtt_extra = "",
                         const std::string& destination_extra = "",
                         const std::string& scheme = "mqtt") const {
    return absl::StrCat(R"(
      destinations {
        name: "fleet"
        mqtt {
          broker: ")",
                        scheme, "://127.0.0.1:", broker_->port(), R"("
          client_id: "till-7"
          topic: "fleet/{device}/events/{type}"
          )",
                        mqtt_extra, R"(
        }
        connect_timeout: "5s"
        )",
                        destination_extra, R"(
      }
      routes { event_type: "*" destination: "fleet" }
      retry { base_delay: "50ms" max_delay: "400ms" }
      agent { probe_interval_min: "100ms" probe_interval_max: "500ms" }
    )");
  }

  // Waits until the store holds nothing pending (at most 120 s, a hang
  // guard), then stops `agent`, which `runner` runs, and joins it.
  void StopWhenDrained(Agent* agent, std::thread* runner) {
    const absl::Time deadline = absl::Now() + absl::Seconds(120);
    while (PendingInStore() > 0 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(50));
    }
    agent->Stop();
    runner->join();
  }

  uint64_t PendingInStore() {
    auto stats = store_->GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->pending_events : ~uint64_t{0};
  }

  std::unique_ptr<MosquittoBroker> broker_;
  std::unique_ptr<MqttRecorder> recorder_;
};

TEST_F(AgentMqttTest, EventsArriveOnTheirTopicWithTheirProperties) {
  ASSERT_NO_FATAL_FAILURE(StartBroker());
  ASSERT_NO_FATAL_FAILURE(StartRecorder());
  const std::vector<std::string> ids = CommitEvents(3, /*keys=*/1, "sale");
  auto agent = MakeAgent(MqttConfig());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  ASSERT_TRUE(recorder_->WaitFor(3, absl::Seconds(20)));
  const std::vector<ReceivedMessage> got = recorder_->Received();
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].topic, "fleet/till-7/events/sale");
    EXPECT_EQ(got[i].qos, 1);
    EXPECT_EQ(got[i].content_type, "application/json");
    EXPECT_EQ(Property(got[i], "event-id"), ids[i]);
    EXPECT_EQ(Property(got[i], "event-type"), "sale");
    EXPECT_EQ(Property(got[i], "ordering-key"), "k0");
    EXPECT_EQ(PayloadN(got[i].payload), static_cast<int>(i));
  }
  EXPECT_EQ(agent->stats().delivered, 3u);
}

// Nothing is published retained: the broker would replay the last sale of
// each topic to every new subscriber. The recorder sees the flag as
// published; a subscriber that comes after the deliveries is replayed
// nothing, so the first message it gets is the next event.
TEST_F(AgentMqttTest, NothingIsRetainedForALaterSubscriber) {
  ASSERT_NO_FATAL_FAILURE(StartBroker());
  ASSERT_NO_FATAL_FAILURE(StartRecorder());
  CommitEvents(3, /*keys=*/1);
  auto agent = MakeAgent(MqttConfig());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  ASSERT_TRUE(recorder_->WaitFor(3, absl::Seconds(20)));
  for (const ReceivedMessage& m : recorder_->Received()) {
    EXPECT_FALSE(m.retain) << Property(m, "event-id");
  }
  recorder::MqttRecorderOptions options;
  options.port = broker_->plain_port();
  options.filter = "fleet/#";
  auto later = MqttRecorder::Start(options);  // returns once subscribed
  ASSERT_OUTBOX_OK(later);
  const std::string next = CommitEvents(1, /*keys=*/1).at(0);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  ASSERT_TRUE((*later)->WaitFor(1, absl::Seconds(20)));
  const ReceivedMessage first = (*later)->Received().at(0);
  EXPECT_EQ(Property(first, "event-id"), next) << "a retained message";
  EXPECT_FALSE(first.retain);
}

TEST_F(AgentMqttTest, EachKeysEventsArriveInCommitOrder) {
  ASSERT_NO_FATAL_FAILURE(StartBroker());
  ASSERT_NO_FATAL_FAILURE(StartRecorder());
  CommitEvents(300, /*keys=*/5);
  auto agent = MakeAgent(MqttConfig());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  ASSERT_TRUE(recorder_->WaitFor(300, absl::Seconds(20)));
  std::map<std::string, int> last;
  for (const ReceivedMessage& m : recorder_->Received()) {
    const std::string key = Property(m, "ordering-key");
    const int n = PayloadN(m.payload);
    EXPECT_GT(n, last.count(key) ? last[key] : -1) << key;
    last[key] = n;
  }
  EXPECT_EQ(last.size(), 5u);
}

// MQTT carries no time of the device (docs/transports.md, "A clock the
// receiver would refuse"): a clock known to be wrong, six years behind the
// store's newest time, holds nothing of an MQTT destination.
TEST_F(AgentMqttTest, AClockKnownToBeWrongHoldsNothing) {
  ASSERT_NO_FATAL_FAILURE(StartBroker());
  ASSERT_NO_FATAL_FAILURE(StartRecorder());
  const std::vector<std::string> ids = CommitEvents(3, /*keys=*/1);
  testing::ShiftedClock clock(-absl::Hours(6 * 365 * 24));
  auto agent = MakeAgent(MqttConfig(), &clock);
  ASSERT_NE(agent, nullptr);
  ASSERT_EQ(DrainUntilEmpty(agent.get(), /*rounds=*/20), 0u);
  EXPECT_EQ(Logged(LogEvent::kClockUntrusted), 1);  // and sent all the same
  ASSERT_TRUE(recorder_->WaitFor(3, absl::Seconds(20)));
  std::vector<std::string> got;
  for (const ReceivedMessage& m : recorder_->Received()) {
    got.push_back(Property(m, "event-id"));
  }
  EXPECT_EQ(got, ids);
}

TEST_F(AgentMqttTest, BrokerDownIsNotAnAttemptAndDeliversOnceItIsBack) {
  ASSERT_NO_FATAL_FAILURE(StartBroker());
  broker_->Kill();
  const std::vector<std::string> ids = CommitEvents(3, /*keys=*/1);
  auto agent = MakeAgent(MqttConfig());
  ASSERT_NE(agent, nullptr);
  auto pending = agent->Drain();
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, 3u);
  EXPECT_GE(agent->stats().offline_results, 1u);
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);  // not attempts
  EXPECT_TRUE(agent->stats().offline);
  bool logged = false;
  for (const LogRecord& r : agent_log_) {
    logged |= r.event == LogEvent::kDestinationUnreachable;
  }
  EXPECT_TRUE(logged);

  ASSERT_OUTBOX_OK(broker_->Restart());
  ASSERT_NO_FATAL_FAILURE(StartRecorder());
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  ASSERT_TRUE(recorder_->WaitFor(3, absl::Seconds(20)));
  std::vector<std::string> got;
  for (const ReceivedMessage& m : recorder_->Received()) {
    got.push_back(Property(m, "event-id"));
  }
  EXPECT_EQ(got, ids);
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);
}

// A listener that accepts the TCP connection and never answers the CONNECT
// (a hung broker, another protocol on the port) is as unreachable as a
// refused connection once connect_timeout passes without a CONNACK: the
// events are held, no attempt is counted, nothing is dead-lettered, and the
// broker is probed again on a new connection.
TEST_F(AgentMqttTest, ABrokerThatNeverSendsConnackIsProbedNotAttempted) {
  testing::RawServer silent(testing::RawServer::Mode::kSilent);
  const std::vector<std::string> ids = CommitEvents(3, /*keys=*/1);
  auto agent = MakeAgent(absl::StrCat(R"(
      destinations {
        name: "fleet"
        mqtt {
          broker: "mqtt://127.0.0.1:)",
                                      silent.port(), R"("
          client_id: "till-7"
          topic: "fleet/{type}"
        }
        connect_timeout: "300ms"
      }
      routes { event_type: "*" destination: "fleet" }
      retry { base_delay: "50ms" max_delay: "400ms" }
      agent { probe_interval_min: "100ms" probe_interval_max: "500ms" }
    )"));
  ASSERT_NE(agent, nullptr);
  // Until the first connection was given up and a probe opened another.
  // The bound is a hang guard: without a CONNACK deadline neither happens.
  const absl::Time guard = absl::Now() + absl::Seconds(60);
  while (absl::Now() < guard &&
         (silent.connections() < 2 || agent->stats().offline_results == 0)) {
    ASSERT_OUTBOX_OK(agent->RunOnce(absl::Now() + absl::Milliseconds(50)));
  }
  EXPECT_GE(silent.connections(), 2);
  const AgentStats stats = agent->stats();
  EXPECT_GE(stats.offline_results, 1u);
  EXPECT_TRUE(stats.offline);
  EXPECT_EQ(stats.retries_scheduled, 0u);  // not attempts
  EXPECT_EQ(stats.dead_lettered, 0u);
  for (const std::string& id : ids) {
    auto e = store_->FindPending(id);
    ASSERT_OUTBOX_OK(e);
    EXPECT_EQ(e->attempts, 0u);
  }
  std::string said;
  for (const LogRecord& r : agent_log_) {
    if (r.event == LogEvent::kDestinationUnreachable) said = r.message;
  }
  EXPECT_NE(said.find("no CONNACK"), std::string::npos) << said;
}

// The broker stops (SIGTERM: it saves its sessions) while the agent is
// publishing, and comes back. A persistent-session subscriber sees every
// event at least once, each copy under the same id with the same body, and
// each key's events first arrive in commit order. The one subscriber stays
// up throughout and reconnects to its saved session by itself: a copy of
// what it received taken while the broker was down could miss messages it
// had already acknowledged (libmosquitto sends the PUBACK before it hands
// the message over), and the broker would not send them again.
TEST_F(AgentMqttTest, BrokerStoppedMidDrainLosesNothing) {
  BrokerConfig config;
  config.persistence = true;
  ASSERT_NO_FATAL_FAILURE(StartBroker(config));
  ASSERT_NO_FATAL_FAILURE(StartRecorder("recorder"));
  const std::vector<std::string> ids = CommitEvents(600, /*keys=*/4);
  auto agent = MakeAgent(MqttConfig());
  ASSERT_NE(agent, nullptr);
  std::thread runner([&] { EXPECT_OUTBOX_OK(agent->Run()); });
  const bool some = recorder_->WaitFor(100, absl::Seconds(60));
  ASSERT_OUTBOX_OK(broker_->Stop());
  const size_t before = recorder_->Received().size();
  absl::SleepFor(absl::Milliseconds(300));  // the agent finds it gone
  const absl::Status restarted = broker_->Restart();
  StopWhenDrained(agent.get(), &runner);
  ASSERT_TRUE(some);
  ASSERT_OUTBOX_OK(restarted);
  EXPECT_EQ(PendingInStore(), 0u);
  // Everything PUBACKed was queued for the recorder's session: wait for
  // each id, not for a count, which the duplicates would reach early.
  const std::set<std::string> all(ids.begin(), ids.end());
  std::vector<ReceivedMessage> got;
  const absl::Time guard = absl::Now() + absl::Seconds(20);
  while (true) {
    got = recorder_->Received();
    std::set<std::string> seen;
    for (const ReceivedMessage& m : got) seen.insert(Property(m, "event-id"));
    if (seen == all || absl::Now() > guard) break;
    absl::SleepFor(absl::Milliseconds(20));
  }

  std::map<std::string, std::string> body;
  std::map<std::string, int> last;
  size_t duplicates = 0;
  for (const ReceivedMessage& m : got) {
    const std::string id = Property(m, "event-id");
    auto [it, first] = body.emplace(id, m.payload);
    if (!first) {
      ++duplicates;
      EXPECT_EQ(it->second, m.payload) << id;
      continue;
    }
    const std::string key = Property(m, "ordering-key");
    const int n = PayloadN(m.payload);
    EXPECT_GT(n, last.count(key) ? last[key] : -1) << key;
    last[key] = n;
  }
  for (const std::string& id : ids) EXPECT_EQ(body.count(id), 1u) << id;
  EXPECT_EQ(body.size(), ids.size());
  std::cout << "stopped after " << before << " messages; " << got.size()
            << " received, " << duplicates << " duplicate(s)\n";
}

// The broker freezes (SIGSTOP) while the agent is publishing, so what the
// agent sends meanwhile never gets a PUBACK, then dies (SIGKILL). Those
// publishes are attempts that failed: each is sent again once the broker is
// back, and reaches the recorder's persistent session (saved by the broker
// before the freeze, so the resend is queued for it however early it
// comes). A variant that took a lost connection for a PUBACK retries
// nothing, and fails here.
TEST_F(AgentMqttTest, PublishesTheBrokerNeverAcknowledgedAreSentAgain) {
  BrokerConfig config;
  config.persistence = true;
  ASSERT_NO_FATAL_FAILURE(StartBroker(config));
  ASSERT_NO_FATAL_FAILURE(StartRecorder("recorder"));
  absl::SleepFor(absl::Milliseconds(1500));  // its session is saved
  // Enough that the agent is still publishing when the broker freezes.
  CommitEvents(4000, /*keys=*/4);
  auto agent = MakeAgent(MqttConfig());
  ASSERT_NE(agent, nullptr);
  std::thread runner([&] { EXPECT_OUTBOX_OK(agent->Run()); });
  const bool some = recorder_->WaitFor(50, absl::Seconds(60));
  ASSERT_OUTBOX_OK(broker_->Pause());
  // Still pending at the freeze, so publishes are out unanswered.
  const uint64_t pending_at_freeze = PendingInStore();
  absl::SleepFor(absl::Milliseconds(300));  // publishes pile up unanswered
  broker_->Kill();
  std::set<std::string> before;  // what reached the recorder before
  for (const ReceivedMessage& m : recorder_->Received()) {
    before.insert(Property(m, "event-id"));
  }
  recorder_.reset();
  const absl::Status restarted = broker_->Restart();
  if (restarted.ok()) StartRecorder("recorder");
  StopWhenDrained(agent.get(), &runner);
  ASSERT_TRUE(some);
  ASSERT_GT(pending_at_freeze, 0u) << "the agent finished before the freeze";
  ASSERT_OUTBOX_OK(restarted);
  ASSERT_NE(recorder_, nullptr);
  EXPECT_EQ(PendingInStore(), 0u);
  std::set<std::string> retried;
  for (const LogRecord& r : agent_log_) {
    if (r.event == LogEvent::kRetryScheduled) retried.insert(r.event_id);
  }
  EXPECT_GE(agent->stats().retries_scheduled, 1u);
  EXPECT_FALSE(retried.empty());
  // Each reached the subscriber: the resend, or (if the broker had it and
  // only its PUBACK was lost) the first copy.
  std::set<std::string> after;
  const absl::Time wait_until = absl::Now() + absl::Seconds(20);
  while (absl::Now() < wait_until) {
    after = before;
    for (const ReceivedMessage& m : recorder_->Received()) {
      after.insert(Property(m, "event-id"));
    }
    if (std::includes(after.begin(), after.end(), retried.begin(),
                      retried.end())) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  for (const std::string& id : retried) EXPECT_EQ(after.count(id), 1u) << id;
}

// The link dies silently (the broker freezes: SIGSTOP, its connections stay
// open and the kernel still acknowledges what is sent, as behind a NAT that
// dropped the mapping): keepalive notices within about two keepalives, so
// the publish that went out unanswered is a failed attempt to send again,
// not a wait for TCP to give up (minutes). Once the broker is back, the
// event reaches the subscriber under its id.
TEST_F(AgentMqttTest, ALinkThatDiedSilentlyIsNoticedByKeepalive) {
  ASSERT_NO_FATAL_FAILURE(StartBroker());
  ASSERT_NO_FATAL_FAILURE(StartRecorder());
  CommitEvents(1, /*keys=*/1);
  auto agent = MakeAgent(MqttConfig(R"(keepalive: "5s")"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  ASSERT_OUTBOX_OK(broker_->Pause());
  const std::string id = CommitEvents(1, /*keys=*/1).at(0);
  // The bound is a hang guard: without keepalive the publish waits on a
  // connection that never answers, far longer than this.
  const absl::Time guard = absl::Now() + absl::Seconds(45);
  while (absl::Now() < guard && agent->stats().retries_scheduled == 0) {
    ASSERT_OUTBOX_OK(agent->RunOnce(absl::Now() + absl::Milliseconds(100)));
  }
  const absl::Status resumed = broker_->Resume();
  ASSERT_GE(agent->stats().retries_scheduled, 1u)
      << "the unanswered publish was never given up";
  ASSERT_OUTBOX_OK(resumed);
  bool lost = false;
  for (const LogRecord& r : agent_log_) {
    lost = lost || (r.event == LogEvent::kRetryScheduled && r.event_id == id);
  }
  EXPECT_TRUE(lost);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  ASSERT_TRUE(recorder_->WaitFor(2, absl::Seconds(30)));
  std::set<std::string> ids;
  for (const ReceivedMessage& m : recorder_->Received()) {
    ids.insert(Property(m, "event-id"));
  }
  EXPECT_EQ(ids.count(id), 1u);
}

// The broker's ACL refuses this client the topic: a verdict on the device,
// as an HTTP 403 is, so the events are held and nothing is dead-lettered.
TEST_F(AgentMqttTest, ANotAuthorizedPubackHoldsTheEvents) {
  BrokerConfig config;
  config.acl = "topic readwrite other/#";  // fleet/# is not allowed
  ASSERT_NO_FATAL_FAILURE(StartBroker(config));
  const std::vector<std::string> ids = CommitEvents(3);
  auto agent = MakeAgent(MqttConfig());
  ASSERT_NE(agent, nullptr);
  auto pending = agent->Drain();
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, ids.size());
  EXPECT_GE(agent->stats().refused_results, 1u);
  EXPECT_EQ(agent->stats().dead_lettered, 0u);
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);
  for (const std::string& id : ids) {
    auto e = store_->FindPending(id);
    ASSERT_OUTBOX_OK(e);
    EXPECT_EQ(e->attempts, 0u);
  }
  bool logged = false;
  for (const LogRecord& r : agent_log_) {
    logged |= r.event == LogEvent::kDestinationRefused &&
              r.message.find("Not authorized") != std::string::npos;
  }
  EXPECT_TRUE(logged);
}

TEST_F(AgentMqttTest, ATypeThatMakesNoTopicIsDeadLetteredUnsent) {
  ASSERT_NO_FATAL_FAILURE(StartBroker());
  CommitEvents(1, 0, "sale/created");
  auto agent = MakeAgent(MqttConfig());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(agent->stats().dead_lettered, 1u);
  EXPECT_EQ(agent->stats().requests, 0u);
}

class AgentMqttTlsTest : public AgentMqttTest {
 protected:
  void SetUp() override {
    AgentMqttTest::SetUp();
    ASSERT_OUTBOX_OK(testing::MakeTestCerts(dir_.path(), &certs_));
    BrokerConfig config;
    config.ca_file = certs_.ca_cert;
    config.cert_file = certs_.server_cert;
    config.key_file = certs_.server_key;
    ASSERT_NO_FATAL_FAILURE(StartBroker(config));
    ASSERT_NO_FATAL_FAILURE(StartRecorder());
  }

  std::string TlsBlock(const std::string& ca) const {
    return absl::StrCat("tls { ca_file: \"", ca, "\" client_cert_file: \"",
                        certs_.client_cert, "\" client_key_file: \"",
                        certs_.client_key, "\" }");
  }

  testing::TestCerts certs_;
};

TEST_F(AgentMqttTlsTest, ClientCertificateAuthenticatesAndDelivers) {
  const std::vector<std::string> ids = CommitEvents(2);
  auto agent = MakeAgent(MqttConfig("", TlsBlock(certs_.ca_cert), "mqtts"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  ASSERT_TRUE(recorder_->WaitFor(2, absl::Seconds(20)));
  EXPECT_EQ(Property(recorder_->Received()[0], "event-id"), ids[0]);
}

TEST_F(AgentMqttTlsTest, WrongCaHoldsEventsWithAClearError) {
  testing::TempDir other;
  testing::TestCerts other_certs;
  ASSERT_OUTBOX_OK(testing::MakeTestCerts(other.path(), &other_certs));
  CommitEvents(2);
  auto agent =
      MakeAgent(MqttConfig("", TlsBlock(other_certs.ca_cert), "mqtts"));
  ASSERT_NE(agent, nullptr);
  auto pending = agent->Drain();
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, 2u);  // held, not dead-lettered
  EXPECT_EQ(agent->stats().dead_lettered, 0u);
  EXPECT_EQ(agent->stats().retries_scheduled, 0u);
  std::string said;
  for (const LogRecord& r : agent_log_) {
    if (r.event == LogEvent::kDestinationUnreachable) said = r.message;
  }
  EXPECT_NE(said.find("TLS"), std::string::npos) << said;
}

}  // namespace
}  // namespace outbox
