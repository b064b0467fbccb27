// Copyright (c) edge-outbox authors.
//
// The SIGKILL soak of pos_sim_kill_test.cc (same runs, same invariant, same
// named checks, kills counted per phase) with the events going to an MQTT 5
// broker: the real mosquitto, persistence on, and a persistent-session
// subscriber (MqttRecorder) that logs every message it gets in
// outbox-sink's format, which the delivery audit reads. A message counts as
// answered 2xx when it reached the subscriber; resends are recognised by
// their `event-id` user property. MQTT carries no signatures, so the audit
// does not ask for them.
//
// The broker restarts meanwhile: every 1.5 s it is stopped
// (SIGTERM: it saves its sessions and queued messages and disconnects
// everyone) and started again 200 ms later on the same port; the agent
// holds its deliveries while it is away (offline is not an attempt) and
// the recorder's persistent session gets what was queued for it. A SIGKILL
// of the broker would lose what it acknowledged since its last save: the
// broker's loss, not the outbox's, so the soak does not do that (the
// agent's own tests kill it, agent_mqtt_test.cc). `make test` runs 25 kills
// (OUTBOX_KILL_SOAK_KILLS overrides; the `soak` ctest entry sets 500).

#include <atomic>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/kill/pos_sim_kill_fixture.h"
#include "tests/testing/status.h"
#include "tools/recorder/mosquitto_broker.h"
#include "tools/recorder/mqtt_recorder.h"

namespace outbox::testing {
namespace {

std::string WriteMqttAgentConfig(const std::string& dir, int port) {
  const std::string path = dir + "/agent.textproto";
  // The retry and probe delays of the webhook soak.
  std::ofstream(path)
      << "destinations {\n"
      << "  name: \"broker\"\n"
      << "  mqtt {\n"
      << "    broker: \"mqtt://127.0.0.1:" << port << "\"\n"
      << "    client_id: \"till-1\"\n"
      << "    topic: \"pos/{device}/{type}\"\n"
      << "  }\n"
      << "  connect_timeout: \"2s\"\n"
      << "}\n"
      << "routes { event_type: \"*\" destination: \"broker\" }\n"
      << "retry { base_delay: \"20ms\" max_delay: \"200ms\" }\n"
      << "agent { probe_interval_min: \"50ms\" "
      << "probe_interval_max: \"300ms\" }\n";
  return path;
}

using recorder::BrokerConfig;
using recorder::MosquittoBroker;
using recorder::MqttRecorder;

TEST_F(PosSimKillTest,
       MqttAcknowledgedSalesAreDeliveredOnceInOrderUnderSigkill) {
  BrokerConfig config;
  config.persistence = true;
  auto broker = MosquittoBroker::Start(dir_, config);
  ASSERT_OUTBOX_OK(broker);
  const std::string log = dir_ + "/recorder.log";
  recorder::MqttRecorderOptions options;
  options.port = (*broker)->plain_port();
  options.filter = "pos/#";
  options.client_id = "soak-recorder";
  options.log_path = log;
  auto recorder = MqttRecorder::Start(options);
  ASSERT_OUTBOX_OK(recorder);
  std::atomic<int> restarts{0};
  absl::Status restarting;  // the thread's until `trouble` is gone
  {
    MosquittoBroker* mosquitto = broker->get();  // nothing else uses it now
    Periodically trouble(absl::Milliseconds(1500), [&] {
      restarting = mosquitto->Stop();
      if (!restarting.ok()) return false;
      absl::SleepFor(absl::Milliseconds(200));
      restarting = mosquitto->Restart();
      if (!restarting.ok()) return false;
      ++restarts;
      return true;
    });
    SoakAndAudit(WriteMqttAgentConfig(dir_, (*broker)->port()), log,
                 /*default_kills=*/25, /*signed_requests=*/false);
  }
  EXPECT_OUTBOX_OK(restarting);
  std::cout << "[kill soak] broker: " << restarts << " restarts" << std::endl;
  EXPECT_GT(restarts, 0);
  EXPECT_OUTBOX_OK((*recorder)->status());
  recorder->reset();
  EXPECT_OUTBOX_OK((*broker)->Stop());
}

}  // namespace
}  // namespace outbox::testing
