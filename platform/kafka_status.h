// Copyright (c) edge-outbox authors.
//
// The one converter from librdkafka's error codes (rd_kafka_resp_err_t, as
// an int so that callers need not include rdkafka.h) to absl::Status, in
// the codes the agent acts on: OK (delivered), kUnavailable (retry later,
// same event id; for the cluster: unreachable, not an attempt),
// kInvalidArgument and kPermissionDenied (rejected for good: dead-letter),
// kNotFound (the topic does not exist: the agent holds the destination's
// events, not as attempts, until it does), kFailedPrecondition (fix the TLS or
// SASL settings, or create a new producer, first).

#ifndef OUTBOX_PLATFORM_KAFKA_STATUS_H_
#define OUTBOX_PLATFORM_KAFKA_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace outbox {

// A message's delivery report, or what Produce() was refused with:
//   NO_ERROR                                   -> OK (all in-sync replicas
//                                                 have it: acks=all)
//   MSG_SIZE_TOO_LARGE, INVALID_MSG_SIZE,
//   RECORD_LIST_TOO_LARGE, INVALID_RECORD,
//   TOPIC_EXCEPTION (bad topic name),
//   UNSUPPORTED_FOR_MESSAGE_FORMAT, __INVALID_ARG -> kInvalidArgument
//   TOPIC_AUTHORIZATION_FAILED,
//   CLUSTER_AUTHORIZATION_FAILED               -> kPermissionDenied
//   INVALID_TIMESTAMP (the device's clock is off
//   by more than the broker allows)            -> kFailedPrecondition
//   UNKNOWN_TOPIC_OR_PART, __UNKNOWN_TOPIC,
//   __UNKNOWN_PARTITION                        -> kNotFound
//   __QUEUE_FULL                               -> kResourceExhausted
//   __PURGE_QUEUE, __PURGE_INFLIGHT            -> kCancelled (AbandonAll)
//   __MSG_TIMED_OUT, __TIMED_OUT, __TRANSPORT,
//   NOT_LEADER_FOR_PARTITION, NOT_ENOUGH_REPLICAS,
//   INVALID_MSG (a CRC mismatch on the way),
//   __FATAL, anything else                     -> kUnavailable
// Why UNKNOWN_TOPIC is kNotFound, not a rejection of this one event:
// librdkafka retries the broker's UNKNOWN_TOPIC_OR_PART itself, and reports
// __UNKNOWN_TOPIC only after the topic stayed missing from the cluster's
// metadata for topic.metadata.propagation.max.ms (30 s): auto-creation is
// off and nobody created it. Every event for that topic would fail the
// same way until an operator creates it, as with a URL that answers 404.
// Unknown codes retry: the agent's attempt limit dead-letters them in the
// end, while a wrongly rejected event would be lost. __MSG_TIMED_OUT and
// __PURGE_INFLIGHT say the broker may or may not have the message. The
// message names the code and its meaning, never the topic or payload.
absl::Status KafkaDeliveryStatus(int err);

// An error librdkafka reports about the cluster (its error callback), with
// librdkafka's `reason` (which names brokers, never credentials):
//   __ALL_BROKERS_DOWN, __TRANSPORT, __RESOLVE -> kUnavailable
//   __SSL; __TRANSPORT with an OpenSSL error in
//   the handshake or about a certificate       -> kFailedPrecondition (the
//                                                 CA, certificate or key)
//   __AUTHENTICATION, SASL_AUTHENTICATION_FAILED,
//   UNSUPPORTED_SASL_MECHANISM                 -> kFailedPrecondition (the
//                                                 SASL settings)
//   __FATAL (reason: the underlying error)     -> kFailedPrecondition
//                                                 (create a new producer)
//   TOPIC_/CLUSTER_AUTHORIZATION_FAILED        -> kPermissionDenied
//   anything else                              -> kUnavailable
// librdkafka reports a failed certificate check as __TRANSPORT when OpenSSL
// fails it while writing rather than in SSL_do_handshake, and a refused
// client certificate under TLS 1.3 (the server says so after the
// handshake) always; only OpenSSL's words in `reason` tell those apart
// from a lost connection (which OpenSSL may call "unexpected eof"). Taking a
// TLS error on the wire for a settings problem costs nothing: both hold the
// events without counting an attempt.
absl::Status KafkaClusterStatus(int err, absl::string_view reason);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_KAFKA_STATUS_H_
