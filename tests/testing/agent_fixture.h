// Copyright (c) edge-outbox authors.
//
// A store, a real outbox-sink on loopback and an agent configured to deliver
// to it: the harness of the delivery suites.

#ifndef OUTBOX_TESTS_TESTING_AGENT_FIXTURE_H_
#define OUTBOX_TESTS_TESTING_AGENT_FIXTURE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "outbox/store.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {

// One request as the sink logged it.
struct SinkLine {
  std::string id;
  std::string path;
  std::string body;
  int status = 0;
  bool duplicate = false;
  bool signature_valid = false;
  std::string signature_error;  // why it was not valid; "" when it was
  bool dropped = false;
  int64_t ts_ms = 0;
};

// The "n" of a payload {"key":"k3","n":17} (CommitEvents'), or -1.
int PayloadN(const std::string& body);

class AgentSinkTest : public ::testing::Test {
 protected:
  static constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

  void SetUp() override;
  void TearDown() override;

  // Starts outbox-sink with `args` (besides secret and log), on `port` (0: a
  // free one). REQUIRES: no sink running.
  void StartSink(const std::vector<std::string>& args = {}, int port = 0);
  void StopSink();
  std::vector<SinkLine> SinkLog() const;

  // Agent configuration text: destination "sink" at the sink's URL + `path`,
  // every type routed to it, fast retries and probes; `extra` is appended,
  // `destination_extra` goes inside the destination.
  std::string Config(const std::string& path = "/",
                     const std::string& extra = "",
                     const std::string& destination_extra = "") const;
  // `clock` (borrowed, must outlive the agent): null for the system clock.
  std::unique_ptr<Agent> MakeAgent(const std::string& config,
                                   Clock* clock = nullptr);

  // Commits `n` events of `type` over `keys` ordering keys (0: unkeyed);
  // payload {"key":"k<i % keys>","n":<i>}. Returns their ids in order.
  std::vector<std::string> CommitEvents(int n, int keys = 0,
                                        const std::string& type = "sale");

  std::string SecretFile(const std::string& secret) const;

  // How many records of `event` MakeAgent's agents logged.
  int Logged(LogEvent event) const {
    int n = 0;
    for (const LogRecord& r : agent_log_) n += r.event == event;
    return n;
  }

  // Drains with `agent` until nothing is pending or `rounds` drains did not
  // get there (events waiting for their retry time make Drain return
  // early); returns what is still pending. The bound ends a stuck test, not
  // a timing: at 50 ms a round it allows ~100 s, where a random fault plan
  // may legitimately need a dozen 1 s Retry-After waits for one unlucky
  // event.
  uint64_t DrainUntilEmpty(Agent* agent, int rounds = 2000);

  TempDir dir_;
  std::string log_path_;
  std::string secret_path_;
  int port_ = 0;
  std::unique_ptr<sink::SinkProcess> sink_;
  std::unique_ptr<Store> store_;
  std::vector<LogRecord> agent_log_;  // what MakeAgent's agents logged
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_AGENT_FIXTURE_H_
