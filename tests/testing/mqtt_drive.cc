// Copyright (c) edge-outbox authors.

#include "tests/testing/mqtt_drive.h"

#include <poll.h>

#include "absl/time/clock.h"

namespace outbox::testing {

bool DriveUntil(MqttPublisher* publisher, std::vector<MqttResult>* results,
                const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    pollfd p{publisher->fd(), POLLIN, 0};
    poll(&p, 1, 100);
    if (!publisher->Process(results).ok()) return false;
  }
  return true;
}

}  // namespace outbox::testing
