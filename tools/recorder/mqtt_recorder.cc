// Copyright (c) edge-outbox authors.

#include "tools/recorder/mqtt_recorder.h"

#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"

namespace outbox::recorder {

// libmosquitto's callbacks, on its network thread; `user` is the recorder.
struct MqttRecorderCallbacks {
  static void OnSubscribe(struct mosquitto*, void* user, int, int, const int*,
                          const mosquitto_property*) {
    static_cast<MqttRecorder*>(user)->Subscribed();
  }

  static void OnMessage(struct mosquitto*, void* user,
                        const struct mosquitto_message* message,
                        const mosquitto_property* props) {
    ReceivedMessage got;
    got.topic = message->topic;
    got.payload.assign(static_cast<const char*>(message->payload),
                       message->payloadlen);
    got.qos = message->qos;
    got.retain = message->retain;
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
    static_cast<MqttRecorder*>(user)->Record(std::move(got));
  }
};

namespace {

absl::Status MosquittoError(int rc) {
  return absl::UnavailableError(
      absl::StrCat("MQTT recorder: ", mosquitto_strerror(rc)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<MqttRecorder>> MqttRecorder::Start(
    const MqttRecorderOptions& options) {
  mosquitto_lib_init();
  auto recorder = std::unique_ptr<MqttRecorder>(new MqttRecorder());
  if (!options.log_path.empty()) {
    OUTBOX_ASSIGN_OR_RETURN(recorder->log_,
                            DeliveryLog::Open(options.log_path));
  }
  const bool persistent = !options.client_id.empty();
  recorder->mosq_ =
      mosquitto_new(persistent ? options.client_id.c_str() : nullptr,
                    !persistent, recorder.get());
  if (recorder->mosq_ == nullptr) {
    return absl::ResourceExhaustedError("MQTT recorder: mosquitto_new failed");
  }
  struct mosquitto* mosq = recorder->mosq_;
  mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
  if (!options.user.empty()) {
    mosquitto_username_pw_set(mosq, options.user.c_str(),
                              options.password.c_str());
  }
  mosquitto_message_v5_callback_set(mosq, &MqttRecorderCallbacks::OnMessage);
  mosquitto_subscribe_v5_callback_set(mosq,
                                      &MqttRecorderCallbacks::OnSubscribe);
  mosquitto_property* connect_props = nullptr;
  if (persistent) {
    mosquitto_property_add_int32(&connect_props,
                                 MQTT_PROP_SESSION_EXPIRY_INTERVAL, 86400);
  }
  int rc = mosquitto_connect_bind_v5(mosq, "127.0.0.1", options.port, 60,
                                     nullptr, connect_props);
  mosquitto_property_free_all(&connect_props);
  if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_loop_start(mosq);
  if (rc == MOSQ_ERR_SUCCESS) {
    // Retain as published: by default a broker clears the flag on what it
    // forwards live, and a retained publish would look like any other.
    rc = mosquitto_subscribe_v5(mosq, nullptr, options.filter.c_str(), 1,
                                MQTT_SUB_OPT_RETAIN_AS_PUBLISHED, nullptr);
  }
  if (rc != MOSQ_ERR_SUCCESS) return MosquittoError(rc);
  absl::MutexLock lock(&recorder->mu_);
  if (!recorder->mu_.AwaitWithTimeout(absl::Condition(&recorder->subscribed_),
                                      absl::Seconds(20))) {
    return absl::UnavailableError("MQTT recorder: no SUBACK within 20 s");
  }
  return recorder;
}

MqttRecorder::~MqttRecorder() {
  if (mosq_ == nullptr) return;
  mosquitto_disconnect(mosq_);
  mosquitto_loop_stop(mosq_, /*force=*/false);
  mosquitto_destroy(mosq_);
}

void MqttRecorder::Subscribed() {
  absl::MutexLock lock(&mu_);
  subscribed_ = true;
}

void MqttRecorder::Record(ReceivedMessage got) {
  // Logged under mu_, so that lines are in the order the messages arrived.
  absl::MutexLock lock(&mu_);
  if (log_ != nullptr) {
    sink::LogRecord record;
    for (const auto& [name, value] : got.user_properties) {
      if (name == "event-id") record.id = value;
      if (name == "event-type") record.type = value;
    }
    record.received = absl::Now();
    record.method = "PUBLISH";
    record.path = got.topic;
    record.status = 200;
    if (!got.content_type.empty()) record.content_type = got.content_type;
    record.body = got.payload;
    log_->Append(std::move(record));
  }
  received_.push_back(std::move(got));
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

absl::Status MqttRecorder::status() {
  return log_ != nullptr ? log_->status() : absl::OkStatus();
}

}  // namespace outbox::recorder
