// Copyright (c) edge-outbox authors.
//
// MqttPublisher: publishes events to an MQTT 5 broker with QoS 1 from the
// agent's one thread, on libmosquitto (Debian's libmosquitto-dev), without
// libmosquitto's own thread and without blocking (except for name
// resolution of `host`: give an address, or a name that resolves quickly).
//
// Shaped like HttpTransport (outbox/http_transport.h): one pollable fd(),
// Process() when it is readable, each publish's outcome reported once by
// its tag. Built only when CMake finds libmosquitto (OUTBOX_WITH_MQTT); the
// agent does not use it yet (issue 14).
//
// Guarantees:
//   - a publish is reported OK only when its PUBACK arrived with a success
//     reason code (PubackStatus, platform/mqtt_status.h, has the table);
//   - a connection lost before a publish's PUBACK reports that publish
//     kUnavailable ("may have been delivered"): the caller sends it again,
//     with the same event id, after Connect(). Each Connect() starts a fresh
//     libmosquitto client, so nothing is resent behind the caller's back and
//     a late PUBACK of an old connection can never be taken for a new one;
//   - the session persists (clean start off, a session expiry interval), so
//     the broker keeps this client's subscriptions and queued messages for
//     it across reconnects;
//   - publishes go out in the order Publish() was called, on one connection.
// Passwords, keys and payloads never appear in statuses; libmosquitto's log
// callback is never installed.

#ifndef OUTBOX_PLATFORM_MQTT_PUBLISHER_H_
#define OUTBOX_PLATFORM_MQTT_PUBLISHER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "outbox/http_transport.h"

namespace outbox {

struct MqttOptions {
  std::string host = "127.0.0.1";
  int port = 1883;
  // Required: the broker keys the persistent session by it.
  std::string client_id;
  // Optional; the password is never shown in statuses.
  std::string username;
  std::string password;
  // Speak TLS (mqtts, usually port 8883). Default: false.
  bool use_tls = false;
  // The CA, client certificate and verification settings when use_tls
  // (the HTTP transport's, outbox/http_transport.h). Both CA settings
  // empty: the system's /etc/ssl/certs.
  TlsOptions tls;
  // PINGREQ interval; 5..65535 seconds. Default: 60.
  int keepalive_seconds = 60;
  // How long the broker keeps the session after a disconnect. Default: a
  // week.
  uint32_t session_expiry_seconds = 7 * 24 * 3600;
  // No CONNACK this long after Connect(): the broker counts as unreachable.
  absl::Duration connect_timeout = absl::Seconds(10);
  // Most publishes awaiting their PUBACK. Default: 64.
  size_t max_in_flight = 64;
};

// One event to publish.
struct MqttMessage {
  uint64_t tag = 0;  // returned in MqttResult::tag
  std::string topic;
  std::string payload;
  // MQTT 5 content-type property; omitted when empty.
  std::string content_type;
  // MQTT 5 user properties "event-id", "event-type" and "ordering-key"
  // (each omitted when empty).
  std::string event_id;
  std::string event_type;
  std::string ordering_key;
};

struct MqttResult {
  uint64_t tag = 0;
  // OK: PUBACK with success. Otherwise PubackStatus(reason_code), or
  // kUnavailable when the connection was lost first (reason_code -1), or
  // kCancelled after Disconnect().
  absl::Status status;
  int reason_code = -1;  // the PUBACK's, or -1 when none arrived
};

// REQUIRES: External synchronization. Meant to be driven by one thread.
class MqttPublisher {
 public:
  enum class State { kDisconnected, kConnecting, kConnected };

  // Checks the options; does not connect. Errors: kInvalidArgument (no
  // client id, bad port or keepalive, half a client certificate pair,
  // max_in_flight 0), kResourceExhausted (no descriptors or memory).
  static absl::StatusOr<std::unique_ptr<MqttPublisher>> Create(
      MqttOptions options);

  virtual ~MqttPublisher() = default;

  // Starts connecting (TCP, TLS, CONNECT) and returns; Process() carries it
  // on. REQUIRES: state() is kDisconnected. Errors (state() stays
  // kDisconnected, connection_status() says the same): kUnavailable (the
  // broker is down: refused at once), kFailedPrecondition or
  // kInvalidArgument (TLS files unusable).
  virtual absl::Status Connect() = 0;

  virtual State state() const = 0;
  // OK while connected; otherwise why not: kUnavailable for a broker that
  // is down, refused the CONNECT (ConnackStatus) or dropped the connection,
  // kFailedPrecondition for a TLS failure, kDeadlineExceeded for no CONNACK
  // within connect_timeout.
  virtual absl::Status connection_status() const = 0;
  // The last CONNACK's session-present flag.
  virtual bool session_present() const = 0;

  // Readable whenever Process() has work to do (socket readiness, the
  // keepalive or connect timer), level-triggered. Valid for the life of the
  // publisher; the caller must not read or close it.
  virtual int fd() const = 0;

  // Advances the connection as far as it goes without blocking and appends
  // the publishes that finished. Harmless when fd() is not readable.
  // A non-OK status means the publisher itself faltered (kInternal).
  virtual absl::Status Process(std::vector<MqttResult>* done) = 0;

  // Sends `message` with QoS 1 and returns; after OK exactly one MqttResult
  // with its tag follows. Errors (no result follows): kUnavailable (not
  // connected), kResourceExhausted (max_in_flight reached),
  // kInvalidArgument (topic or property not valid UTF-8, topic with
  // wildcards, packet too large for the broker).
  virtual absl::Status Publish(const MqttMessage& message) = 0;

  // Publishes awaiting their PUBACK.
  virtual size_t InFlight() const = 0;

  // Sends DISCONNECT (the session stays on the broker) and reports every
  // publish in flight as kCancelled: the broker may or may not have it.
  virtual void Disconnect(std::vector<MqttResult>* done) = 0;
};

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_MQTT_PUBLISHER_H_
