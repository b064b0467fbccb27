// Copyright (c) edge-outbox authors.

#include "platform/kafka_status.h"

#include <librdkafka/rdkafka.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace outbox {
namespace {

// "Broker: Message size too large (MSG_SIZE_TOO_LARGE)".
std::string Describe(rd_kafka_resp_err_t err) {
  return absl::StrCat(rd_kafka_err2str(err), " (", rd_kafka_err2name(err), ")");
}

// An OpenSSL error during the handshake, or a peer's alert about a
// certificate ("tlsv13 alert certificate required", "alert unknown ca"):
// not an "unexpected eof" or a bad record on an established connection.
bool IsTlsSetupError(absl::string_view reason) {
  if (!absl::StrContains(reason, "SSL routines")) return false;
  return absl::StrContains(reason, "in state SSL_HANDSHAKE") ||
         absl::StrContains(reason, "certificate") ||
         absl::StrContains(reason, "unknown ca");
}

}  // namespace

absl::Status KafkaDeliveryStatus(int code) {
  const auto err = static_cast<rd_kafka_resp_err_t>(code);
  const std::string what = absl::StrCat("Kafka: ", Describe(err));
  switch (err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR:
      return absl::OkStatus();
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
    case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
      return absl::InvalidArgumentError(
          absl::StrCat(what, "; resending it would not help"));
    case RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP:
      // A broker with message.timestamp.difference.max.ms judges the
      // record's timestamp against its own clock: a verdict on the device's
      // clock, which would refuse every record alike, not on this one.
      return absl::FailedPreconditionError(absl::StrCat(
          what,
          "; the broker refuses the record's timestamp "
          "(message.timestamp.difference.max.ms): the device's clock is "
          "wrong"));
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return absl::PermissionDeniedError(absl::StrCat(
          what,
          "; the cluster's ACLs do not let this client write to the "
          "topic"));
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return absl::NotFoundError(absl::StrCat(
          what,
          "; the topic does not exist and the cluster does not create "
          "it: create it, then resume"));
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
      return absl::ResourceExhaustedError(
          absl::StrCat(what, "; wait for deliveries"));
    case RD_KAFKA_RESP_ERR__PURGE_QUEUE:
      return absl::CancelledError(
          absl::StrCat(what, "; abandoned before it was sent"));
    case RD_KAFKA_RESP_ERR__PURGE_INFLIGHT:
      return absl::CancelledError(absl::StrCat(
          what, "; abandoned awaiting the broker, which may have it"));
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
      return absl::UnavailableError(absl::StrCat(
          what,
          "; not acknowledged within the message timeout, the broker "
          "may or may not have it: send it again (same event id)"));
    default:
      return absl::UnavailableError(absl::StrCat(what, "; retry later"));
  }
}

absl::Status KafkaClusterStatus(int code, absl::string_view reason) {
  const auto err = static_cast<rd_kafka_resp_err_t>(code);
  const std::string what =
      absl::StrCat("Kafka: ", reason, " (", rd_kafka_err2name(err), ")");
  if (err == RD_KAFKA_RESP_ERR__SSL ||
      (err == RD_KAFKA_RESP_ERR__TRANSPORT && IsTlsSetupError(reason))) {
    return absl::FailedPreconditionError(absl::StrCat(
        what,
        "; check the CA, the client certificate and key, and that the "
        "brokers speak TLS on this port"));
  }
  switch (err) {
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
      return absl::FailedPreconditionError(absl::StrCat(
          what, "; check the SASL mechanism, username and password"));
    case RD_KAFKA_RESP_ERR__FATAL:
      return absl::FailedPreconditionError(absl::StrCat(
          what,
          "; the idempotent producer cannot go on: create a new one "
          "and send the unreported events again"));
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return absl::PermissionDeniedError(absl::StrCat(
          what, "; the cluster's ACLs do not let this client produce"));
    default:
      return absl::UnavailableError(what);
  }
}

}  // namespace outbox
