// Copyright (c) edge-outbox authors.
//
// The librdkafka configuration behind KafkaProducer: option checks, and the
// rd_kafka_conf_t of an idempotent producer (platform/kafka_producer.cc).

#ifndef OUTBOX_PLATFORM_KAFKA_CLIENT_SETUP_H_
#define OUTBOX_PLATFORM_KAFKA_CLIENT_SETUP_H_

#include <librdkafka/rdkafka.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/kafka_producer.h"

namespace outbox {

// Errors: kInvalidArgument naming the option at fault.
absl::Status CheckKafkaOptions(const KafkaOptions& options);

// A configuration with the options, idempotence, acks=all and a log
// callback that drops librdkafka's log lines; the caller adds its own
// callbacks and owns it (rd_kafka_new takes it over, or
// rd_kafka_conf_destroy). Errors: kFailedPrecondition (librdkafka was built
// without a feature the options ask for), kInvalidArgument (a value it
// refused), kResourceExhausted.
absl::StatusOr<rd_kafka_conf_t*> NewKafkaConf(const KafkaOptions& options);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_KAFKA_CLIENT_SETUP_H_
