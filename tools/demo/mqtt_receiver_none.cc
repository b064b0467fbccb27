// Copyright (c) edge-outbox authors.
//
// --transport mqtt in a build without MQTT (no libmosquitto-dev, or
// -DOUTBOX_WITH_MQTT=OFF): flag parsing refuses it (TransportBuilt).

#include "tools/demo/receiver.h"

namespace outbox::demo {

absl::Status MqttTransportBuilt() {
  return absl::FailedPreconditionError(
      "this outbox-demo was built without MQTT (needs libmosquitto-dev: "
      "OUTBOX_WITH_MQTT)");
}

absl::StatusOr<std::unique_ptr<StoryReceiver>> MakeMqttReceiver(
    const DemoOptions&, const ReceiverSetup&) {
  return MqttTransportBuilt();
}

}  // namespace outbox::demo
