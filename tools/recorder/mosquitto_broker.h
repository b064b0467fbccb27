// Copyright (c) edge-outbox authors.
//
// The real mosquitto broker (Debian's package) as a child process on free
// loopback ports, for whatever needs a broker to publish to: outbox-demo's
// MQTT story and the MQTT tests (platform/mqtt_publisher_test.cc,
// tests/agent/agent_mqtt_test.cc, the MQTT kill soak).

#ifndef OUTBOX_TOOLS_RECORDER_MOSQUITTO_BROKER_H_
#define OUTBOX_TOOLS_RECORDER_MOSQUITTO_BROKER_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "platform/child_process.h"

namespace outbox::recorder {

// The path of mosquitto's program `name` ("mosquitto", "mosquitto_passwd"):
// the first executable of that name on PATH, else in /usr/sbin, where
// Debian puts the broker (outside most users' PATH). Errors:
// kFailedPrecondition saying how to install it.
absl::StatusOr<std::string> FindMosquittoProgram(absl::string_view name);

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
  // Kill(), as they were at the last save). Queues are then unbounded: a
  // persistent subscriber that is away must not lose what it was sent
  // (mosquitto's default drops a session's 1001st queued message).
  bool persistence = false;
};

// REQUIRES: External synchronization.
class MosquittoBroker {
 public:
  // Starts mosquitto with a config file in `dir` and waits until it
  // accepts connections. Errors: kFailedPrecondition if mosquitto is not
  // installed (FindMosquittoProgram); kInternal with its stderr if it does
  // not start.
  static absl::StatusOr<std::unique_ptr<MosquittoBroker>> Start(
      const std::string& dir, const BrokerConfig& config);
  ~MosquittoBroker() { Kill(); }
  MosquittoBroker(const MosquittoBroker&) = delete;
  MosquittoBroker& operator=(const MosquittoBroker&) = delete;

  int port() const { return port_; }
  int plain_port() const { return plain_port_; }
  // SIGSTOPs the broker: connections stay open, nothing is answered.
  absl::Status Pause();
  // SIGCONTs it after Pause(): it reads what its connections sent meanwhile.
  absl::Status Resume();
  // SIGKILLs the broker (no goodbye to its clients).
  void Kill();
  // SIGTERMs the broker and waits until it exited: it disconnects its
  // clients and, with `persistence`, saves their sessions first.
  // Errors: kInternal if it does not exit within 20 s.
  absl::Status Stop();
  // Starts it again on the same ports after Kill() or Stop(). Errors: as
  // Start.
  absl::Status Restart();
  std::string Stderr() const;

 private:
  MosquittoBroker(std::string binary, std::string dir, int port, int plain_port)
      : binary_(std::move(binary)),
        dir_(std::move(dir)),
        port_(port),
        plain_port_(plain_port) {}
  // Waits until plain_port() (and port()) accept TCP connections.
  absl::Status WaitReady();

  const std::string binary_;
  const std::string dir_;
  const int port_;
  const int plain_port_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace outbox::recorder

#endif  // OUTBOX_TOOLS_RECORDER_MOSQUITTO_BROKER_H_
