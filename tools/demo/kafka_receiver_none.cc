// Copyright (c) edge-outbox authors.
//
// --transport kafka in a build without Kafka (no librdkafka-dev, or
// -DOUTBOX_WITH_KAFKA=OFF): flag parsing refuses it (TransportBuilt).

#include "tools/demo/receiver.h"

namespace outbox::demo {

absl::Status KafkaTransportBuilt() {
  return absl::FailedPreconditionError(
      "this outbox-demo was built without Kafka (needs librdkafka-dev: "
      "OUTBOX_WITH_KAFKA)");
}

absl::StatusOr<std::unique_ptr<StoryReceiver>> MakeKafkaReceiver(
    const DemoOptions&, const ReceiverSetup&) {
  return KafkaTransportBuilt();
}

}  // namespace outbox::demo
