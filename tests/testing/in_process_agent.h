// Copyright (c) edge-outbox authors.
//
// An agent in process over a store with a fake clock: its requests go to the
// recording transport's Receiver and its time is the store's clock_, which
// only the test moves. Each RunOnce() does what is ready at the fake time and
// never waits (the transport's fd is readable as soon as a request waits).

#ifndef OUTBOX_TESTS_TESTING_IN_PROCESS_AGENT_H_
#define OUTBOX_TESTS_TESTING_IN_PROCESS_AGENT_H_

#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "tests/testing/recording_transport.h"
#include "tests/testing/status.h"
#include "tests/testing/store_fixture.h"

namespace outbox::testing {

// Receiver answers that are all of one kind.
inline AnswerWeights Always(Answer answer) {
  AnswerWeights w{0, 0, 0, 0, 0, 0};
  // In Answer's order, as Receiver draws them.
  int* weights[] = {&w.ok,          &w.server_error, &w.too_many_requests,
                    &w.bad_request, &w.lost_answer,  &w.offline};
  *weights[static_cast<int>(answer)] = 1;
  return w;
}

class InProcessAgentTest : public StoreTest {
 protected:
  // The receiver answers every request with `answer` (after any Script()).
  // REQUIRES: no agent made yet.
  void AnswerAlways(Answer answer) {
    receiver_ = std::make_unique<Receiver>(/*seed=*/1, Always(answer));
  }

  // An agent on `config` whose requests go to receiver_ through transport_
  // and whose clock is the store's fake clock_.
  std::unique_ptr<Agent> MakeAgent(const std::string& config,
                                   bool watch_network = false) {
    AgentOptions options;
    options.config_text = config;
    options.clock = &clock_;
    options.watch_network = watch_network;
    auto transport = std::make_unique<RecordingTransport>(receiver_.get(),
                                                          [] { return true; });
    transport_ = transport.get();
    options.transport = std::move(transport);
    options.log = [this](const LogRecord& r) { log_.push_back(r); };
    auto agent = Agent::Create(store_.get(), std::move(options));
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? std::move(*agent) : nullptr;
  }

  // Requests the agent starts in one round at the current fake time, after
  // which a second round takes in their answers.
  uint64_t RequestsNow(Agent* agent) {
    const uint64_t before = agent->stats().requests;
    EXPECT_OUTBOX_OK(agent->RunOnce());
    const uint64_t started = agent->stats().requests - before;
    EXPECT_OUTBOX_OK(agent->RunOnce());
    return started;
  }

  void TearDown() override {
    if (HasFailure()) {
      for (const LogRecord& r : log_) {
        std::cerr << "agent: " << LogEventName(r.event) << ": " << r.message
                  << "\n";
      }
    }
  }

  std::unique_ptr<Receiver> receiver_ =
      std::make_unique<Receiver>(/*seed=*/1, Always(Answer::kOffline));
  RecordingTransport* transport_ = nullptr;  // owned by the agent
  std::vector<LogRecord> log_;               // what the agent logged
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_IN_PROCESS_AGENT_H_
