// Copyright (c) edge-outbox authors.
//
// A subscriber that records what an MQTT broker delivered to it, and can
// log each message in outbox-sink's request-log format
// (tools/sink/request_log.h), so that the delivery audit (tools/audit/)
// reads MQTT deliveries as it reads webhooks: outbox-demo's MQTT story, the
// MQTT tests and the MQTT kill soak.

#ifndef OUTBOX_TOOLS_RECORDER_MQTT_RECORDER_H_
#define OUTBOX_TOOLS_RECORDER_MQTT_RECORDER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tools/recorder/delivery_log.h"

struct mosquitto;  // libmosquitto's client, kept out of this header

namespace outbox::recorder {

// What the subscriber received.
struct ReceivedMessage {
  std::string topic, payload, content_type;
  int qos = 0;
  // The retain flag as the publisher set it (the subscription asks the
  // broker to keep it), and set on a retained message the broker replays
  // to a new subscription.
  bool retain = false;
  std::vector<std::pair<std::string, std::string>> user_properties;
};

struct MqttRecorderOptions {
  int port = 0;        // the broker's, on 127.0.0.1 (plain MQTT)
  std::string filter;  // subscribed with QoS 1, e.g. "pos/#"
  // Empty: an anonymous client.
  std::string user, password;
  // Non-empty: a persistent session under this id (clean start off, kept a
  // day), so that a recorder started later under the same id, or this one
  // after the broker restarted, gets what the broker queued for it
  // meanwhile. Empty: a clean session with a random id.
  std::string client_id;
  // Non-empty: a line per message is appended to this file in
  // outbox-sink's request-log format: id the `event-id` user property, type
  // `event-type`, body the payload, path the topic, method PUBLISH, status
  // 200 (it reached the subscriber: delivered), `duplicate` when the id
  // came before, `signature_valid` false (MQTT carries no signature).
  std::string log_path;
};

// A subscriber on libmosquitto's own network thread, which reconnects by
// itself (every second) when the broker goes away; the agent's publisher
// never uses that thread. Thread-safe.
class MqttRecorder {
 public:
  // Connects, subscribes and waits for the SUBACK (up to 20 s).
  // Errors: kUnavailable if the broker cannot be reached or does not
  // answer; PosixError codes of opening log_path.
  static absl::StatusOr<std::unique_ptr<MqttRecorder>> Start(
      const MqttRecorderOptions& options);
  // Disconnects and stops the network thread.
  ~MqttRecorder();
  MqttRecorder(const MqttRecorder&) = delete;
  MqttRecorder& operator=(const MqttRecorder&) = delete;

  // Waits until at least `n` messages arrived (false at the deadline).
  bool WaitFor(size_t n, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<ReceivedMessage> Received() ABSL_LOCKS_EXCLUDED(mu_);
  // The first failure to append to log_path (kUnavailable: disk full), or
  // OK. A line that could not be written is a delivery the audit will call
  // lost, so whoever audits the log checks this first.
  absl::Status status();

 private:
  friend struct MqttRecorderCallbacks;  // libmosquitto's, in the .cc

  MqttRecorder() = default;
  // Records `got` and appends it to log_ (if any), in arrival order.
  void Record(ReceivedMessage got) ABSL_LOCKS_EXCLUDED(mu_);
  void Subscribed() ABSL_LOCKS_EXCLUDED(mu_);

  struct mosquitto* mosq_ = nullptr;
  std::unique_ptr<DeliveryLog> log_;  // set before the connection
  absl::Mutex mu_;
  bool subscribed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<ReceivedMessage> received_ ABSL_GUARDED_BY(mu_);
};

}  // namespace outbox::recorder

#endif  // OUTBOX_TOOLS_RECORDER_MQTT_RECORDER_H_
