// Copyright (c) edge-outbox authors.

#include "tests/testing/mosquitto_broker.h"

#include <arpa/inet.h>
#include <mqtt_protocol.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/reserved_port.h"
#include "platform/scoped_fd.h"
#include "tests/testing/sink_process.h"

namespace outbox::testing {
namespace {

// Two distinct free ports (both held while the second is picked); released
// on return for mosquitto to bind.
absl::Status FreePorts(int* first, int* second) {
  absl::StatusOr<std::unique_ptr<ReservedPort>> a = ReservedPort::Reserve();
  if (!a.ok()) return a.status();
  absl::StatusOr<std::unique_ptr<ReservedPort>> b = ReservedPort::Reserve();
  if (!b.ok()) return b.status();
  *first = (*a)->port();
  *second = (*b)->port();
  return absl::OkStatus();
}

bool Accepts(int port) {
  ScopedFd s(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) ==
         0;
}

absl::Status WriteConfig(const std::string& dir, const BrokerConfig& config,
                         int port, int plain_port) {
  std::ofstream conf(dir + "/mosquitto.conf");
  // Root (CI) would make mosquitto drop to the "mosquitto" user, which
  // cannot read the test's private directory.
  conf << "user root\nlog_dest stderr\n"
       << "listener " << plain_port << " 127.0.0.1\n";
  if (config.persistence) {
    conf << "persistence true\npersistence_location " << dir
         << "/\nautosave_interval 1\n";
  } else {
    conf << "persistence false\n";
  }
  if (!config.ca_file.empty()) {
    conf << "listener " << port << " 127.0.0.1\n"
         << "cafile " << config.ca_file << "\ncertfile " << config.cert_file
         << "\nkeyfile " << config.key_file << "\nrequire_certificate true\n";
  }
  if (!config.acl.empty()) {
    std::ofstream(dir + "/acl") << config.acl << "\n";
    conf << "acl_file " << dir << "/acl\n";
  }
  if (config.user.empty()) {
    conf << "allow_anonymous true\n";
    return absl::OkStatus();
  }
  const std::string file = dir + "/passwords";
  conf << "allow_anonymous false\npassword_file " << file << "\n";
  absl::StatusOr<sink::ExitResult> made =
      sink::RunToExit(OUTBOX_MOSQUITTO_PASSWD, dir,
                      {"-c", "-b", file, config.user, config.password});
  if (!made.ok()) return made.status();
  if (made->exit_code != 0) {
    return absl::InternalError(absl::StrCat("mosquitto_passwd: ", made->err));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<MosquittoBroker>> MosquittoBroker::Start(
    const std::string& dir, const BrokerConfig& config) {
  int plain_port = 0, tls_port = 0;
  absl::Status ports = FreePorts(&plain_port, &tls_port);
  if (!ports.ok()) return ports;
  const int port = config.ca_file.empty() ? plain_port : tls_port;
  absl::Status written = WriteConfig(dir, config, port, plain_port);
  if (!written.ok()) return written;
  std::unique_ptr<MosquittoBroker> broker(
      new MosquittoBroker(dir, port, plain_port));
  absl::Status started = broker->Restart();
  if (!started.ok()) return started;
  return broker;
}

absl::Status MosquittoBroker::Restart() {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::StartToFiles(
          {OUTBOX_MOSQUITTO_BROKER, "-c", dir_ + "/mosquitto.conf"},
          dir_ + "/mosquitto.out", dir_ + "/mosquitto.err");
  if (!child.ok()) return child.status();
  process_ = std::move(*child);
  return WaitReady();
}

absl::Status MosquittoBroker::WaitReady() {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!Accepts(plain_port_) || (port_ != plain_port_ && !Accepts(port_))) {
    if (process_->Wait(absl::Now()) != -1 || absl::Now() > deadline) {
      return absl::InternalError(
          absl::StrCat("mosquitto did not start: ", Stderr()));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::OkStatus();
}

absl::Status MosquittoBroker::Pause() { return process_->Signal(SIGSTOP); }

void MosquittoBroker::Kill() {
  if (process_ != nullptr && !process_->reaped()) process_->Kill();
}

absl::Status MosquittoBroker::Stop() {
  if (process_ == nullptr || process_->reaped()) return absl::OkStatus();
  absl::Status s = process_->Signal(SIGTERM);
  if (!s.ok()) return s;
  if (process_->Wait(absl::Now() + absl::Seconds(20)) == -1) {
    return absl::InternalError("mosquitto did not exit after SIGTERM");
  }
  return absl::OkStatus();
}

std::string MosquittoBroker::Stderr() const {
  std::stringstream text;
  text << std::ifstream(dir_ + "/mosquitto.err").rdbuf();
  return text.str();
}

absl::StatusOr<std::unique_ptr<MqttRecorder>> MqttRecorder::Start(
    int port, const std::string& filter, const std::string& user,
    const std::string& password, const std::string& client_id,
    const std::string& log_path) {
  mosquitto_lib_init();
  auto recorder = std::unique_ptr<MqttRecorder>(new MqttRecorder());
  if (!log_path.empty()) {
    absl::StatusOr<std::unique_ptr<sink::RequestLog>> log =
        sink::RequestLog::Open(log_path);
    if (!log.ok()) return log.status();
    recorder->log_ = std::move(*log);
  }
  const bool persistent = !client_id.empty();
  recorder->mosq_ = mosquitto_new(persistent ? client_id.c_str() : nullptr,
                                  !persistent, recorder.get());
  struct mosquitto* mosq = recorder->mosq_;
  mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
  if (!user.empty())
    mosquitto_username_pw_set(mosq, user.c_str(), password.c_str());
  mosquitto_message_v5_callback_set(mosq, &OnMessage);
  mosquitto_subscribe_v5_callback_set(mosq, &OnSubscribe);
  mosquitto_property* connect_props = nullptr;
  if (persistent) {
    mosquitto_property_add_int32(&connect_props,
                                 MQTT_PROP_SESSION_EXPIRY_INTERVAL, 86400);
  }
  int rc = mosquitto_connect_bind_v5(mosq, "127.0.0.1", port, 60, nullptr,
                                     connect_props);
  mosquitto_property_free_all(&connect_props);
  if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_loop_start(mosq);
  if (rc == MOSQ_ERR_SUCCESS) {
    rc = mosquitto_subscribe_v5(mosq, nullptr, filter.c_str(), 1, 0, nullptr);
  }
  if (rc != MOSQ_ERR_SUCCESS) {
    return absl::InternalError(
        absl::StrCat("recorder: ", mosquitto_strerror(rc)));
  }
  absl::MutexLock lock(&recorder->mu_);
  if (!recorder->mu_.AwaitWithTimeout(absl::Condition(&recorder->subscribed_),
                                      absl::Seconds(20))) {
    return absl::InternalError("recorder: no SUBACK");
  }
  return recorder;
}

MqttRecorder::~MqttRecorder() {
  mosquitto_disconnect(mosq_);
  mosquitto_loop_stop(mosq_, /*force=*/false);
  mosquitto_destroy(mosq_);
}

void MqttRecorder::OnSubscribe(struct mosquitto*, void* user, int, int,
                               const int*, const mosquitto_property*) {
  auto* self = static_cast<MqttRecorder*>(user);
  absl::MutexLock lock(&self->mu_);
  self->subscribed_ = true;
}

void MqttRecorder::OnMessage(struct mosquitto*, void* user,
                             const struct mosquitto_message* message,
                             const mosquitto_property* props) {
  ReceivedMessage got;
  got.topic = message->topic;
  got.payload.assign(static_cast<const char*>(message->payload),
                     message->payloadlen);
  got.qos = message->qos;
  char* content_type = nullptr;
  if (mosquitto_property_read_string(props, MQTT_PROP_CONTENT_TYPE,
                                     &content_type, false) != nullptr) {
    got.content_type = content_type;
    free(content_type);
  }
  const mosquitto_property* p = props;
  bool skip_first = false;
  while (true) {
    char* name = nullptr;
    char* value = nullptr;
    p = mosquitto_property_read_string_pair(p, MQTT_PROP_USER_PROPERTY, &name,
                                            &value, skip_first);
    if (p == nullptr) break;
    got.user_properties.emplace_back(name, value);
    free(name);
    free(value);
    skip_first = true;
  }
  auto* self = static_cast<MqttRecorder*>(user);
  absl::MutexLock lock(&self->mu_);
  self->LogMessage(got);
  self->received_.push_back(std::move(got));
}

void MqttRecorder::LogMessage(const ReceivedMessage& got) {
  if (log_ == nullptr) return;
  sink::LogRecord record;
  for (const auto& [name, value] : got.user_properties) {
    if (name == "event-id") record.id = value;
    if (name == "event-type") record.type = value;
  }
  record.received = absl::Now();
  record.method = "PUBLISH";
  record.path = got.topic;
  record.status = 200;  // it reached the subscriber: delivered
  record.duplicate = record.id && !logged_ids_.insert(*record.id).second;
  if (!got.content_type.empty()) record.content_type = got.content_type;
  record.body = got.payload;
  // Under mu_, so that lines are in the order the messages arrived.
  absl::Status appended = log_->Append(record);
  if (!appended.ok()) ADD_FAILURE() << "recorder log: " << appended;
}

bool MqttRecorder::WaitFor(size_t n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return received_.size() >= n;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

std::vector<ReceivedMessage> MqttRecorder::Received() {
  absl::MutexLock lock(&mu_);
  return received_;
}

bool DriveUntil(MqttPublisher* publisher, std::vector<MqttResult>* results,
                const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    pollfd p{publisher->fd(), POLLIN, 0};
    poll(&p, 1, 100);
    if (!publisher->Process(results).ok()) return false;
  }
  return true;
}

}  // namespace outbox::testing
