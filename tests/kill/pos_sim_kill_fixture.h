// Copyright (c) edge-outbox authors.
//
// What the SIGKILL soak's tests share whatever the transport (webhooks to
// outbox-sink in pos_sim_kill_test.cc, MQTT in pos_sim_mqtt_kill_test.cc):
// the directory and seed from the environment, running PosSimSoak, the
// checks that every phase got a kill, the delivery audit over the
// receiver's log and the figures printed. The invariant is listed at the
// top of pos_sim_kill_test.cc.

#ifndef OUTBOX_TESTS_KILL_POS_SIM_KILL_FIXTURE_H_
#define OUTBOX_TESTS_KILL_POS_SIM_KILL_FIXTURE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {

// The value of the environment variable `name` if it is a number, else
// `fallback`.
uint64_t EnvNumber(const char* name, uint64_t fallback);

// For the faults a soak injects meanwhile (a broker restarted, a produce
// refused): calls `tick` every `interval` on a thread of its own until the
// destructor, or until `tick` returns false.
class Periodically {
 public:
  Periodically(absl::Duration interval, std::function<bool()> tick);
  ~Periodically();  // waits for a tick under way

 private:
  absl::Notification stop_;
  std::thread thread_;
};

// Environment: OUTBOX_KILL_SOAK_SEED (default: random, printed; replays the
// kill plan, not the exact timing), OUTBOX_KILL_SOAK_DIR (run there and keep
// the store and logs), OUTBOX_KILL_SOAK_KILLS (overrides the test's count).
// REQUIRES: External synchronization.
class PosSimKillTest : public ::testing::Test {
 protected:
  PosSimKillTest();

  // Runs the soak with the agent configuration at `config_path` (delivering
  // to a receiver that writes `log` in outbox-sink's format) and
  // `default_kills` kills, then audits the log against the store; reports
  // through gtest. `signed_requests`: the log's requests carry signatures
  // to check (webhooks), or none (MQTT).
  void SoakAndAudit(const std::string& config_path, const std::string& log,
                    int default_kills, bool signed_requests);

  TempDir temp_;
  std::string dir_;  // temp_ or OUTBOX_KILL_SOAK_DIR
  uint64_t seed_ = 0;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_KILL_POS_SIM_KILL_FIXTURE_H_
