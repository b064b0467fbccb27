// Copyright (c) edge-outbox authors.
//
// For the MQTT publisher's tests (platform/mqtt_publisher_test.cc): the real
// mosquitto broker as a child process on a free loopback port, a subscriber
// that records what reaches it, and a loop that drives an MqttPublisher
// from its fd the way the agent's poller would.

#ifndef OUTBOX_TESTS_TESTING_MOSQUITTO_BROKER_H_
#define OUTBOX_TESTS_TESTING_MOSQUITTO_BROKER_H_

#include <mosquitto.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "platform/child_process.h"
#include "platform/mqtt_publisher.h"
#include "tools/sink/request_log.h"

namespace outbox::testing {

struct BrokerConfig {
  // A user in a password_file (made with mosquitto_passwd); empty:
  // anonymous clients are allowed.
  std::string user, password;
  // port() is then a TLS listener with this CA, certificate and key, where
  // clients must present a certificate signed by the CA; plain_port()
  // stays plain, for the recorder.
  std::string ca_file, cert_file, key_file;
  // Lines of an acl_file ("topic write fleet/#"); empty: no ACL.
  std::string acl;
  // Keep sessions and queued messages in a file in the broker's directory,
  // saved every second and when it stops, so they survive a restart (after
  // Kill(), as they were at the last save).
  bool persistence = false;
};

// REQUIRES: External synchronization.
class MosquittoBroker {
 public:
  // Starts mosquitto with a config file in `dir` and waits until it
  // accepts connections. Errors: kInternal with its stderr if it does not.
  static absl::StatusOr<std::unique_ptr<MosquittoBroker>> Start(
      const std::string& dir, const BrokerConfig& config);
  ~MosquittoBroker() { Kill(); }

  int port() const { return port_; }
  int plain_port() const { return plain_port_; }
  // SIGSTOPs the broker: connections stay open, nothing is answered.
  absl::Status Pause();
  // SIGKILLs the broker (no goodbye to its clients).
  void Kill();
  // SIGTERMs the broker and waits until it exited: it disconnects its
  // clients and, with `persistence`, saves their sessions first.
  absl::Status Stop();
  // Starts it again on the same port after Kill() or Stop().
  absl::Status Restart();
  std::string Stderr() const;

 private:
  MosquittoBroker(std::string dir, int port, int plain_port)
      : dir_(std::move(dir)), port_(port), plain_port_(plain_port) {}
  // Waits until plain_port() accepts TCP connections.
  absl::Status WaitReady();

  const std::string dir_;
  const int port_;
  const int plain_port_;
  std::unique_ptr<ChildProcess> process_;
};

// What a subscriber received.
struct ReceivedMessage {
  std::string topic, payload, content_type;
  int qos = 0;
  std::vector<std::pair<std::string, std::string>> user_properties;
};

// A subscriber on libmosquitto's own network thread (tests only: the
// publisher under test never uses one). Thread-safe.
class MqttRecorder {
 public:
  // Connects to 127.0.0.1:port (as `user` if not empty), subscribes to
  // `filter` with QoS 1 and waits for the SUBACK. A non-empty `client_id`
  // makes it a persistent session (clean start off, kept a day), so that a
  // recorder started later under the same id gets what the broker queued
  // for it meanwhile. A non-empty `log_path` gets a line per message in
  // outbox-sink's request log format (tools/sink/request_log.h), for the
  // delivery audit (tools/audit/): id the `event-id` user property, body
  // the payload, path the topic, status 200, `duplicate` when the id came
  // before, `signature_valid` false (MQTT carries none).
  static absl::StatusOr<std::unique_ptr<MqttRecorder>> Start(
      int port, const std::string& filter, const std::string& user = "",
      const std::string& password = "", const std::string& client_id = "",
      const std::string& log_path = "");
  ~MqttRecorder();

  // Waits until at least `n` messages arrived (false at the deadline).
  bool WaitFor(size_t n, absl::Duration timeout);
  std::vector<ReceivedMessage> Received();

 private:
  static void OnMessage(struct mosquitto*, void* user,
                        const struct mosquitto_message* message,
                        const mosquitto_property* props);
  // Appends `got` to log_ (if any) as outbox-sink would log a request.
  void LogMessage(const ReceivedMessage& got)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void OnSubscribe(struct mosquitto*, void* user, int, int, const int*,
                          const mosquitto_property*);

  struct mosquitto* mosq_ = nullptr;
  absl::Mutex mu_;
  bool subscribed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<ReceivedMessage> received_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<sink::RequestLog> log_;  // set before the connection
  std::set<std::string> logged_ids_ ABSL_GUARDED_BY(mu_);
};

// Calls publisher->Process() whenever its fd is readable, appending the
// results to `*results`, until `done()` holds (true) or `timeout` passes
// (false; a hang guard, not a measurement).
bool DriveUntil(MqttPublisher* publisher, std::vector<MqttResult>* results,
                const std::function<bool()>& done,
                absl::Duration timeout = absl::Seconds(20));

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_MOSQUITTO_BROKER_H_
