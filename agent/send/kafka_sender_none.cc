// Copyright (c) edge-outbox authors.
//
// NewKafkaSender in a build without Kafka (OUTBOX_WITH_KAFKA=OFF, or no
// librdkafka): firmware that never produces to Kafka does not link
// librdkafka, and a configuration that asks for it is refused up front.

#include "absl/strings/str_cat.h"
#include "agent/send/kafka_sender.h"

namespace outbox {

absl::StatusOr<std::unique_ptr<Sender>> NewKafkaSender(
    const Destination& destination) {
  return absl::FailedPreconditionError(absl::StrCat(
      "destination ", destination.name,
      " produces to Kafka, and this agent was built without Kafka "
      "(configure with -DOUTBOX_WITH_KAFKA=ON and librdkafka-dev for the "
      "target; a fully static build cannot have it)"));
}

}  // namespace outbox
