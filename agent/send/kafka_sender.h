// Copyright (c) edge-outbox authors.
//
// Kafka destinations as Senders (sender.h): one idempotent producer per
// destination (platform/kafka_producer.h), created with the agent; librdkafka
// connects in the background and reconnects by itself. An event becomes a
// record of the destination's topic: key = ordering key, value = payload,
// headers event-id, event-type, content-type. It is delivered on a
// successful delivery report (all in-sync replicas have it).
//
// Delivery reports, as KafkaDeliveryStatus (platform/kafka_status.h) says:
//   OK                                 -> delivered
//   kInvalidArgument, kPermissionDenied -> dead letter (too large, not
//                                         authorized: the same each time)
//   kNotFound (no such topic)           -> never left: the destination is
//                                         unreachable and probed until the
//                                         topic exists (no resume needed)
//   kUnavailable, anything else         -> an attempt, retried (the broker
//                                         may have it), unless the cluster
//                                         is unreachable (below)
//
// Brokers down, TLS or SASL failing: librdkafka reports it on the producer
// (connection_status(): kUnavailable, kFailedPrecondition) and clears it only
// on the next successful delivery. While it says so, Start() refuses events
// at once with that status (never left, not an attempt: the agent marks the
// destination unreachable and probes) as long as anything is still in
// flight; with nothing in flight it produces the event anyway. That one is
// the probe (the agent sends one at a time to an unreachable destination):
// librdkafka sends it when a broker is back, and its delivery clears the
// status. A message that times out (message_timeout) while the cluster is
// still unreachable comes back "never left" too: as far as anyone can tell
// it was not written, and were it written, the resend has the same event id
// anyway, so an outage longer than message_timeout costs no attempts.
//
// Built only with OUTBOX_WITH_KAFKA; without it NewKafkaSender fails, and so
// does an agent configured with a Kafka destination.

#ifndef OUTBOX_AGENT_SEND_KAFKA_SENDER_H_
#define OUTBOX_AGENT_SEND_KAFKA_SENDER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "agent/config/config.h"
#include "agent/send/sender.h"

namespace outbox {

struct KafkaResult;  // platform/kafka_producer.h

// The sender for `destination` (kind kKafka); librdkafka starts connecting.
// Errors: kFailedPrecondition when this build has no Kafka support or TLS
// files are unusable; kInvalidArgument / kResourceExhausted from
// KafkaProducer::Create.
absl::StatusOr<std::unique_ptr<Sender>> NewKafkaSender(
    const Destination& destination);

// What a delivery report means for the agent (docs/transports.md's Kafka
// table); `cluster` is the producer's connection_status() after the report,
// `fatal` whether the producer failed fatally. Exported for its test; only
// in builds with Kafka.
SendResult SendResultFromKafka(const KafkaResult& result,
                               const absl::Status& cluster, bool fatal);

}  // namespace outbox

#endif  // OUTBOX_AGENT_SEND_KAFKA_SENDER_H_
