// Copyright (c) edge-outbox authors.
//
// A batched request for given events, built as the agent builds one (each
// event's BatchLine, then BuildBatchRequest) but without packing: for tests
// of the format and of receivers.

#ifndef OUTBOX_TESTS_TESTING_BATCH_REQUEST_H_
#define OUTBOX_TESTS_TESTING_BATCH_REQUEST_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "agent/config/config.h"
#include "agent/send/batch_request.h"
#include "outbox/event.h"
#include "outbox/http_transport.h"

namespace outbox::testing {

// REQUIRES: `events` is not empty and holds no null.
inline HttpRequest BatchRequestOf(
    const std::vector<const PendingEvent*>& events,
    const Destination& destination, absl::Time now, uint64_t tag) {
  std::string body;
  for (const PendingEvent* e : events) body += BatchLine(*e);
  return BuildBatchRequest(events, std::move(body), destination, now, tag);
}

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_BATCH_REQUEST_H_
