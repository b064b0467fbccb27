// Copyright (c) edge-outbox authors.
//
// Making and configuring one libmosquitto client for MqttPublisher
// (platform/mqtt_publisher.cc): MQTT 5, persistent session, credentials,
// TLS. Kept apart so the publisher's file holds only the event loop.

#include "platform/mqtt_client_setup.h"

#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <mutex>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "platform/mqtt_status.h"

namespace outbox {
namespace {

// mosquitto_lib_init initializes OpenSSL and is not safe to race with
// itself. It is never undone: other clients in the process may still run.
void InitMosquittoOnce() {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
}

const char* OrNull(const std::string& s) {
  return s.empty() ? nullptr : s.c_str();
}

absl::Status SetTls(struct mosquitto* mosq, const TlsOptions& tls) {
  const bool no_ca = tls.ca_file.empty() && tls.ca_dir.empty();
  const char* ca_dir = no_ca ? "/etc/ssl/certs" : OrNull(tls.ca_dir);
  int rc = mosquitto_tls_set(mosq, OrNull(tls.ca_file), ca_dir,
                             OrNull(tls.client_cert_file),
                             OrNull(tls.client_key_file), nullptr);
  if (rc == MOSQ_ERR_INVAL) {
    // libmosquitto says INVAL when it cannot open one of the files.
    return absl::FailedPreconditionError(
        "MQTT TLS: cannot read the CA file or the client certificate or key; "
        "check that they exist and that the agent may read them");
  }
  OUTBOX_RETURN_IF_ERROR(MosquittoStatus(rc, "MQTT TLS setup"));
  rc = mosquitto_tls_opts_set(mosq, tls.verify_peer ? 1 : 0, nullptr, nullptr);
  OUTBOX_RETURN_IF_ERROR(MosquittoStatus(rc, "MQTT TLS options"));
  rc = mosquitto_tls_insecure_set(mosq, !tls.verify_host);
  return MosquittoStatus(rc, "MQTT TLS host verification");
}

// Stores the CONNECT properties on the client. libmosquitto 2.0 has no
// asynchronous connect that takes properties, but mosquitto_connect_bind_v5
// copies them onto the client before it checks the port: an invalid port
// stores them without connecting, and mosquitto_connect_bind_async (which
// reconnects with the stored properties) then sends them. A test checks the
// outcome: the broker reports the session present after a reconnect.
absl::Status SetConnectProperties(struct mosquitto* mosq,
                                  const MqttOptions& options) {
  mosquitto_property* props = nullptr;
  int rc =
      mosquitto_property_add_int32(&props, MQTT_PROP_SESSION_EXPIRY_INTERVAL,
                                   options.session_expiry_seconds);
  if (rc == MOSQ_ERR_SUCCESS) {
    rc = mosquitto_connect_bind_v5(mosq, options.host.c_str(), /*port=*/-1,
                                   options.keepalive_seconds, nullptr, props);
  }
  mosquitto_property_free_all(&props);
  if (rc != MOSQ_ERR_INVAL) {
    return absl::InternalError(
        absl::StrCat("storing the MQTT CONNECT properties: unexpected ",
                     mosquitto_strerror(rc), " (libmosquitto changed?)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckMqttOptions(const MqttOptions& options) {
  if (options.client_id.empty()) {
    return absl::InvalidArgumentError(
        "MQTT: a client id is required (the broker keys the session by it)");
  }
  if (options.host.empty() || options.port < 1 || options.port > 65535) {
    return absl::InvalidArgumentError("MQTT: host empty or port not 1..65535");
  }
  if (options.keepalive_seconds < 5 || options.keepalive_seconds > 65535) {
    return absl::InvalidArgumentError("MQTT: keepalive must be 5..65535 s");
  }
  if (options.tls.client_cert_file.empty() !=
      options.tls.client_key_file.empty()) {
    return absl::InvalidArgumentError(
        "MQTT TLS: give both the client certificate and its key, or neither");
  }
  if (options.max_in_flight == 0) {
    return absl::InvalidArgumentError("MQTT: max_in_flight must be > 0");
  }
  return absl::OkStatus();
}

absl::StatusOr<struct mosquitto*> NewMqttClient(const MqttOptions& options,
                                                void* user) {
  InitMosquittoOnce();
  // clean_start=false: the broker keeps the session across connections.
  struct mosquitto* mosq =
      mosquitto_new(options.client_id.c_str(), /*clean_start=*/false, user);
  if (mosq == nullptr) {
    return absl::ResourceExhaustedError("MQTT: out of memory for a client");
  }
  absl::Status status = MosquittoStatus(
      mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5),
      "MQTT: selecting protocol version 5");
  if (status.ok()) {
    status =
        MosquittoStatus(mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1),
                        "MQTT: TCP_NODELAY");
  }
  if (status.ok() && !options.username.empty()) {
    status = MosquittoStatus(
        mosquitto_username_pw_set(mosq, options.username.c_str(),
                                  OrNull(options.password)),
        "MQTT: setting the username");  // never the password itself
  }
  if (status.ok() && options.use_tls) status = SetTls(mosq, options.tls);
  if (status.ok()) status = SetConnectProperties(mosq, options);
  if (!status.ok()) {
    mosquitto_destroy(mosq);
    return status;
  }
  return mosq;
}

}  // namespace outbox
