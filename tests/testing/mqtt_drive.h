// Copyright (c) edge-outbox authors.
//
// For the MQTT publisher's tests (platform/mqtt_publisher_test.cc): a loop
// that drives an MqttPublisher from its fd the way the agent's poller
// would. The broker and the recording subscriber they run against are
// tools/recorder/ (MosquittoBroker, MqttRecorder), which this header brings
// along.

#ifndef OUTBOX_TESTS_TESTING_MQTT_DRIVE_H_
#define OUTBOX_TESTS_TESTING_MQTT_DRIVE_H_

#include <functional>
#include <vector>

#include "absl/time/time.h"
#include "platform/mqtt_publisher.h"
#include "tools/recorder/mosquitto_broker.h"
#include "tools/recorder/mqtt_recorder.h"

namespace outbox::testing {

// Calls publisher->Process() whenever its fd is readable, appending the
// results to `*results`, until `done()` holds (true) or `timeout` passes
// (false; a hang guard, not a measurement).
bool DriveUntil(MqttPublisher* publisher, std::vector<MqttResult>* results,
                const std::function<bool()>& done,
                absl::Duration timeout = absl::Seconds(20));

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_MQTT_DRIVE_H_
