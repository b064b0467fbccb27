// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_TESTS_TESTING_EVENTS_H_
#define OUTBOX_TESTS_TESTING_EVENTS_H_

#include <string>
#include <utility>

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

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_EVENTS_H_
