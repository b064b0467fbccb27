// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_TESTS_TESTING_EVENTS_H_
#define OUTBOX_TESTS_TESTING_EVENTS_H_

#include <string>
#include <utility>

#include "absl/time/time.h"
#include "outbox/event.h"

namespace outbox::testing {

// An Event with the fields tests vary most; the rest keep their defaults.
inline Event MakeEvent(std::string type, std::string ordering_key = "",
                       std::string payload = "{}") {
  Event e;
  e.type = std::move(type);
  e.ordering_key = std::move(ordering_key);
  e.payload = std::move(payload);
  return e;
}

// A pending sale as the store hands it to the agent: seq 7, a fixed UUIDv7
// id, type sale.created, a JSON payload, committed at `created` and never
// tried yet.
inline PendingEvent MakePendingSale(absl::Time created) {
  PendingEvent e;
  e.seq = 7;
  e.id = "0190a5c4-7d2e-7b3a-9c1f-2b4d6e8f0a1c";
  e.type = "sale.created";
  e.payload = R"({"sale":"sale-1001","total":"12.50"})";
  e.content_type = "application/json";
  e.created = created;
  return e;
}

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_EVENTS_H_
