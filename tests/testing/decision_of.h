// Copyright (c) edge-outbox authors.
//
// The agent's decision on a sender's result for a first attempt under the
// default retry policy: what the transports' tables are tested against
// (agent/send/*_sender_test.cc).

#ifndef OUTBOX_TESTS_TESTING_DECISION_OF_H_
#define OUTBOX_TESTS_TESTING_DECISION_OF_H_

#include "absl/random/random.h"
#include "absl/time/time.h"
#include "agent/decision.h"

namespace outbox::testing {

inline Decision DecisionOf(const SendResult& result) {
  PendingEvent event;
  event.id = "e";
  absl::BitGen gen;
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  return Decide(result, event, RetryPolicy(), now, gen);
}

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_DECISION_OF_H_
