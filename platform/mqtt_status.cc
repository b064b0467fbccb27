// Copyright (c) edge-outbox authors.

#include "platform/mqtt_status.h"

#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace outbox {
namespace {

std::string Describe(int reason_code) {
  return absl::StrFormat("%s (0x%02x)", mosquitto_reason_string(reason_code),
                         reason_code);
}

}  // namespace

absl::Status PubackStatus(int reason_code) {
  const std::string what = absl::StrCat("the broker answered the publish with ",
                                        Describe(reason_code));
  switch (reason_code) {
    case MQTT_RC_SUCCESS:
    case MQTT_RC_NO_MATCHING_SUBSCRIBERS:
      return absl::OkStatus();
    case MQTT_RC_NOT_AUTHORIZED:
      return absl::PermissionDeniedError(absl::StrCat(
          what,
          "; the broker's ACL does not let this client publish to the "
          "topic"));
    case MQTT_RC_TOPIC_NAME_INVALID:
    case MQTT_RC_PAYLOAD_FORMAT_INVALID:
      return absl::InvalidArgumentError(
          absl::StrCat(what, "; resending it would not help"));
    default:
      return absl::UnavailableError(absl::StrCat(what, "; retry later"));
  }
}

absl::Status ConnackStatus(int reason_code) {
  if (reason_code == MQTT_RC_SUCCESS) return absl::OkStatus();
  std::string hint;
  switch (reason_code) {
    case MQTT_RC_BAD_USERNAME_OR_PASSWORD:
      hint = "; check the username and password";
      break;
    case MQTT_RC_NOT_AUTHORIZED:
      // mosquitto answers a wrong password with this, not with 0x86.
      hint =
          "; check the username and password (or client certificate) and "
          "the broker's ACL for this client id";
      break;
    case MQTT_RC_CLIENTID_NOT_VALID:
      hint = "; check the client id";
      break;
    default:
      break;
  }
  return absl::UnavailableError(absl::StrCat(
      "the broker refused the connection: ", Describe(reason_code), hint));
}

absl::Status MosquittoStatus(int rc, absl::string_view context,
                             int errno_value) {
  if (rc == MOSQ_ERR_SUCCESS) return absl::OkStatus();
  std::string message = absl::StrCat(context, ": ", mosquitto_strerror(rc));
  if (rc == MOSQ_ERR_ERRNO)
    absl::StrAppend(&message, ": ", strerror(errno_value));
  switch (rc) {
    case MOSQ_ERR_NO_CONN:
    case MOSQ_ERR_CONN_REFUSED:
    case MOSQ_ERR_CONN_LOST:
    case MOSQ_ERR_KEEPALIVE:
    case MOSQ_ERR_EAI:
    case MOSQ_ERR_LOOKUP:
    case MOSQ_ERR_ERRNO:
    case MOSQ_ERR_PROTOCOL:
    case MOSQ_ERR_MALFORMED_PACKET:
    case MOSQ_ERR_TIMEOUT:
      return absl::UnavailableError(message);
    case MOSQ_ERR_TLS:
    case MOSQ_ERR_TLS_HANDSHAKE:
      return absl::FailedPreconditionError(absl::StrCat(
          message,
          "; check the CA file, the client certificate and key, and "
          "that the broker speaks TLS on this port"));
    case MOSQ_ERR_INVAL:
    case MOSQ_ERR_PAYLOAD_SIZE:
    case MOSQ_ERR_MALFORMED_UTF8:
    case MOSQ_ERR_QOS_NOT_SUPPORTED:
    case MOSQ_ERR_OVERSIZE_PACKET:
    case MOSQ_ERR_DUPLICATE_PROPERTY:
      return absl::InvalidArgumentError(message);
    case MOSQ_ERR_NOMEM:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace outbox
