// Copyright (c) edge-outbox authors.
//
// The libmosquitto client behind MqttPublisher: option checks, and one
// configured client per connection (platform/mqtt_publisher.cc).

#ifndef OUTBOX_PLATFORM_MQTT_CLIENT_SETUP_H_
#define OUTBOX_PLATFORM_MQTT_CLIENT_SETUP_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/mqtt_publisher.h"

struct mosquitto;

namespace outbox {

// Errors: kInvalidArgument naming the option at fault.
absl::Status CheckMqttOptions(const MqttOptions& options);

// A new client for MQTT 5 with clean start off, the session expiry
// interval, credentials and TLS set, not connected; `user` is passed to its
// callbacks. The caller owns it (mosquitto_destroy). Errors:
// kResourceExhausted, kFailedPrecondition (TLS files unreadable), kInternal.
absl::StatusOr<struct mosquitto*> NewMqttClient(const MqttOptions& options,
                                                void* user);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_MQTT_CLIENT_SETUP_H_
