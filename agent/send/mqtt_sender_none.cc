// Copyright (c) edge-outbox authors.
//
// NewMqttSender in a build without MQTT (OUTBOX_WITH_MQTT=OFF, or no
// libmosquitto): firmware that never publishes to a broker does not link
// libmosquitto, and a configuration that asks for one is refused up front.

#include "absl/strings/str_cat.h"
#include "agent/send/mqtt_sender.h"

namespace outbox {

absl::StatusOr<std::unique_ptr<Sender>> NewMqttSender(
    const Destination& destination) {
  return absl::FailedPreconditionError(absl::StrCat(
      "destination ", destination.name,
      " publishes to an MQTT broker, and this agent was built without MQTT "
      "(configure with -DOUTBOX_WITH_MQTT=ON and libmosquitto-dev for the "
      "target; a fully static build cannot have it)"));
}

}  // namespace outbox
