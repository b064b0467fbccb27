// Copyright (c) edge-outbox authors.
//
// MQTT 5 destinations as Senders (sender.h): one broker connection per
// destination (platform/mqtt_publisher.h), connected when the first event
// is due and kept while it stays up. An event is published with QoS 1 to
// the destination's topic template, and is delivered on a PUBACK with a
// success reason code; a refusing PUBACK is dead-lettered or retried as
// PubackStatus (platform/mqtt_status.h) says.
//
// A broker that is down, refuses the connection, or fails TLS counts as
// unreachable, not as an attempt: Start() says so at once (kUnavailable,
// kFailedPrecondition) when the connection cannot even begin, and events
// that waited for a connection that then failed come back offline. A
// connection lost after a publish left is an attempt ("may have been
// delivered"): the event is sent again with the same id.
//
// Built only with OUTBOX_WITH_MQTT; without it NewMqttSender fails, and so
// does an agent configured with an MQTT destination.

#ifndef OUTBOX_AGENT_SEND_MQTT_SENDER_H_
#define OUTBOX_AGENT_SEND_MQTT_SENDER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "agent/config/config.h"
#include "agent/send/sender.h"

namespace outbox {

// The sender for `destination` (kind kMqtt); does not connect yet.
// Errors: kFailedPrecondition when this build has no MQTT support;
// kInvalidArgument / kResourceExhausted from MqttPublisher::Create.
absl::StatusOr<std::unique_ptr<Sender>> NewMqttSender(
    const Destination& destination);

// What a publish's outcome means for the agent: no PUBACK is an answer
// lost (the broker may have it); a success PUBACK delivers; a refusing one
// dead-letters when the event itself is wrong (0x90 topic name, 0x99
// payload format: PubackStatus's kInvalidArgument), holds the destination
// when this client is not authorized (0x87), and is retried otherwise.
// Only with OUTBOX_WITH_MQTT.
struct MqttResult;
SendResult SendResultFromMqtt(const MqttResult& result);

}  // namespace outbox

#endif  // OUTBOX_AGENT_SEND_MQTT_SENDER_H_
