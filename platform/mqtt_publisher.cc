// Copyright (c) edge-outbox authors.
//
// The libmosquitto MqttPublisher, driven from the caller's poller: the
// client's socket and a Timer (connect deadline, then keepalive ticks) sit
// in one Poller whose fd the caller watches. libmosquitto runs its
// callbacks inside mosquitto_loop_read/loop_write/loop_misc, on the
// caller's thread; they only record outcomes for Process() to hand out.

#include "platform/mqtt_publisher.h"

#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <cerrno>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "platform/mqtt_client_setup.h"
#include "platform/mqtt_status.h"
#include "platform/poller.h"

namespace outbox {
namespace {

// The publish's MQTT 5 properties: the content type, and the event's id,
// type and ordering key as user properties (each only when not empty).
// Errors: kInvalidArgument for a value that is not valid UTF-8.
absl::Status AddProperties(const MqttMessage& message,
                           mosquitto_property** props) {
  int rc = MOSQ_ERR_SUCCESS;
  if (!message.content_type.empty()) {
    rc = mosquitto_property_add_string(props, MQTT_PROP_CONTENT_TYPE,
                                       message.content_type.c_str());
  }
  const std::pair<const char*, const std::string*> user[] = {
      {"event-id", &message.event_id},
      {"event-type", &message.event_type},
      {"ordering-key", &message.ordering_key}};
  for (const auto& [name, value] : user) {
    if (rc != MOSQ_ERR_SUCCESS) break;
    if (value->empty()) continue;
    rc = mosquitto_property_add_string_pair(props, MQTT_PROP_USER_PROPERTY,
                                            name, value->c_str());
  }
  return MosquittoStatus(rc, "MQTT publish properties");
}

class MosquittoPublisher final : public MqttPublisher {
 public:
  explicit MosquittoPublisher(MqttOptions options)
      : options_(std::move(options)),
        where_(absl::StrCat(options_.use_tls ? "mqtts://" : "mqtt://",
                            options_.host, ":", options_.port)) {}
  ~MosquittoPublisher() override { DropClient(); }

  absl::Status Init();
  absl::Status Connect() override;
  State state() const override { return state_; }
  absl::Status connection_status() const override { return status_; }
  bool session_present() const override { return session_present_; }
  int fd() const override { return poller_->fd(); }
  absl::Status Process(std::vector<MqttResult>* done) override;
  absl::Status Publish(const MqttMessage& message) override;
  size_t InFlight() const override { return in_flight_.size(); }
  void Disconnect(std::vector<MqttResult>* done) override;

 private:
  static void OnConnect(struct mosquitto*, void* user, int reason_code,
                        int flags, const mosquitto_property*);
  static void OnDisconnect(struct mosquitto*, void* user, int rc,
                           const mosquitto_property*);
  static void OnPublish(struct mosquitto*, void* user, int mid, int reason_code,
                        const mosquitto_property*);

  // The connection is gone: every publish in flight fails with
  // `in_flight_status`, and `why` becomes connection_status(). Only the
  // first call after a Connect() counts (libmosquitto may report one loss
  // twice, e.g. a refused CONNACK and then the closed socket).
  void Lost(absl::Status why, const absl::Status& in_flight_status);
  // Runs one libmosquitto step; a failure it did not report through
  // OnDisconnect (a TLS handshake failure) is a loss too.
  void Step(int rc, int errno_value);
  // Watches the client's socket for reading, and for writing while
  // libmosquitto has bytes queued.
  absl::Status Rewatch();
  void DropClient();

  const MqttOptions options_;
  const std::string where_;  // "mqtt://host:port", for messages
  std::unique_ptr<Poller> poller_;
  std::unique_ptr<Timer> timer_;
  struct mosquitto* mosq_ = nullptr;  // one per Connect()
  int watched_fd_ = -1;
  uint32_t watched_events_ = 0;
  State state_ = State::kDisconnected;
  absl::Status status_ = absl::UnavailableError("not connected yet");
  bool session_present_ = false;
  absl::flat_hash_map<int, uint64_t> in_flight_;  // packet id -> tag
  std::vector<MqttResult> finished_;              // for the next Process()
};

absl::Status MosquittoPublisher::Init() {
  OUTBOX_ASSIGN_OR_RETURN(poller_, Poller::Create());
  OUTBOX_ASSIGN_OR_RETURN(timer_, Timer::Create());
  return poller_->Watch(timer_->fd(), Poller::kReadable);
}

void MosquittoPublisher::DropClient() {
  if (watched_fd_ >= 0) poller_->Forget(watched_fd_);
  watched_fd_ = -1;
  watched_events_ = 0;
  if (mosq_ != nullptr) mosquitto_destroy(mosq_);  // closes its socket
  mosq_ = nullptr;
}

absl::Status MosquittoPublisher::Connect() {
  if (state_ != State::kDisconnected) {
    return absl::FailedPreconditionError(
        "MQTT Connect(): already connecting or connected");
  }
  // A fresh client: the old one's unacknowledged publishes were reported
  // failed and must not be resent behind the caller's back.
  DropClient();
  absl::StatusOr<struct mosquitto*> mosq = NewMqttClient(options_, this);
  if (!mosq.ok()) return status_ = mosq.status();
  mosq_ = *mosq;
  mosquitto_connect_v5_callback_set(mosq_, &OnConnect);
  mosquitto_disconnect_v5_callback_set(mosq_, &OnDisconnect);
  mosquitto_publish_v5_callback_set(mosq_, &OnPublish);
  const int rc =
      mosquitto_connect_bind_async(mosq_, options_.host.c_str(), options_.port,
                                   options_.keepalive_seconds, nullptr);
  if (rc != MOSQ_ERR_SUCCESS) {
    status_ =
        MosquittoStatus(rc, absl::StrCat("connecting to ", where_), errno);
    DropClient();
    return status_;
  }
  state_ = State::kConnecting;
  status_ = absl::UnavailableError(absl::StrCat("connecting to ", where_));
  OUTBOX_RETURN_IF_ERROR(timer_->Arm(options_.connect_timeout));
  return Rewatch();
}

void MosquittoPublisher::OnConnect(struct mosquitto*, void* user,
                                   int reason_code, int flags,
                                   const mosquitto_property*) {
  auto* self = static_cast<MosquittoPublisher*>(user);
  absl::Status refused = ConnackStatus(reason_code);
  if (!refused.ok()) {
    self->Lost(absl::Status(refused.code(), absl::StrCat(self->where_, ": ",
                                                         refused.message())),
               absl::UnavailableError("not connected"));
    return;
  }
  self->state_ = State::kConnected;
  self->status_ = absl::OkStatus();
  self->session_present_ = (flags & 1) != 0;
  // loop_misc sends PINGREQs and notices a silent broker; twice per
  // keepalive is often enough for both.
  (void)self->timer_->Arm(absl::Seconds(self->options_.keepalive_seconds) / 2);
}

void MosquittoPublisher::OnDisconnect(struct mosquitto*, void* user, int rc,
                                      const mosquitto_property*) {
  const int errno_value = errno;
  auto* self = static_cast<MosquittoPublisher*>(user);
  // A broker's DISCONNECT carries an MQTT reason code (>= 0x80); the
  // library's own failures are MOSQ_ERR_* codes.
  absl::Status why =
      rc >= 0x80
          ? absl::UnavailableError(absl::StrCat("the broker disconnected: ",
                                                mosquitto_reason_string(rc)))
          : MosquittoStatus(rc, "the connection", errno_value);
  if (why.ok()) why = absl::UnavailableError("disconnected");
  self->Lost(
      absl::Status(why.code(), absl::StrCat(self->where_, ": ", why.message())),
      absl::UnavailableError(
          absl::StrCat("the connection to ", self->where_,
                       " was lost before the PUBACK; the broker may have the "
                       "message: send it again (same event id)")));
}

void MosquittoPublisher::OnPublish(struct mosquitto*, void* user, int mid,
                                   int reason_code, const mosquitto_property*) {
  auto* self = static_cast<MosquittoPublisher*>(user);
  auto it = self->in_flight_.find(mid);
  if (it == self->in_flight_.end()) return;  // not ours (cannot happen)
  self->finished_.push_back(
      MqttResult{it->second, PubackStatus(reason_code), reason_code});
  self->in_flight_.erase(it);
}

void MosquittoPublisher::Lost(absl::Status why,
                              const absl::Status& in_flight_status) {
  if (state_ == State::kDisconnected) return;
  for (const auto& [mid, tag] : in_flight_) {
    finished_.push_back(MqttResult{tag, in_flight_status, -1});
  }
  in_flight_.clear();
  state_ = State::kDisconnected;
  status_ = std::move(why);
  (void)timer_->Disarm();
  if (watched_fd_ >= 0) poller_->Forget(watched_fd_);
  watched_fd_ = -1;
  watched_events_ = 0;
}

void MosquittoPublisher::Step(int rc, int errno_value) {
  if (rc == MOSQ_ERR_SUCCESS || state_ == State::kDisconnected) return;
  absl::Status why = MosquittoStatus(rc, where_, errno_value);
  Lost(why, absl::UnavailableError(absl::StrCat(
                "the connection to ", where_,
                " failed before the PUBACK; send the message again")));
}

absl::Status MosquittoPublisher::Process(std::vector<MqttResult>* done) {
  const bool tick = timer_->Clear();
  if (state_ != State::kDisconnected) {
    int rc = mosquitto_loop_read(mosq_, 1);
    Step(rc, errno);
    if (state_ != State::kDisconnected && mosquitto_want_write(mosq_)) {
      rc = mosquitto_loop_write(mosq_, 1);
      Step(rc, errno);
    }
  }
  if (tick && state_ == State::kConnecting) {
    Lost(absl::UnavailableError(
             absl::StrCat(where_, ": no CONNACK within ",
                          absl::FormatDuration(options_.connect_timeout),
                          "; the broker is unreachable or not speaking MQTT")),
         absl::UnavailableError("not connected"));
  } else if (tick && state_ == State::kConnected) {
    Step(mosquitto_loop_misc(mosq_), errno);
    if (state_ == State::kConnected) {
      OUTBOX_RETURN_IF_ERROR(
          timer_->Arm(absl::Seconds(options_.keepalive_seconds) / 2));
    }
  }
  absl::Status watched = Rewatch();
  for (MqttResult& result : finished_) done->push_back(std::move(result));
  finished_.clear();
  return watched;
}

absl::Status MosquittoPublisher::Publish(const MqttMessage& message) {
  if (state_ != State::kConnected) {
    return absl::UnavailableError(
        absl::StrCat("MQTT publish: not connected (", status_.message(), ")"));
  }
  if (in_flight_.size() >= options_.max_in_flight) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "MQTT publish: ", in_flight_.size(), " publishes await their PUBACK"));
  }
  mosquitto_property* props = nullptr;
  absl::Status status = AddProperties(message, &props);
  int mid = 0;
  if (status.ok()) {
    // The payload is copied; QoS 1, not retained.
    const int rc = mosquitto_publish_v5(
        mosq_, &mid, message.topic.c_str(),
        static_cast<int>(message.payload.size()), message.payload.data(),
        /*qos=*/1, /*retain=*/false, props);
    status = MosquittoStatus(rc, "MQTT publish", errno);
  }
  mosquitto_property_free_all(&props);
  if (!status.ok()) return status;
  in_flight_[mid] = message.tag;
  (void)Rewatch();  // a failure is retried, and returned, by Process()
  return absl::OkStatus();
}

void MosquittoPublisher::Disconnect(std::vector<MqttResult>* done) {
  if (state_ != State::kDisconnected) {
    // Best effort: the DISCONNECT is written now or never. The session
    // stays on the broker for session_expiry_seconds.
    mosquitto_disconnect_v5(mosq_, MQTT_RC_NORMAL_DISCONNECTION, nullptr);
    Lost(absl::UnavailableError("disconnected by the caller"),
         absl::CancelledError("MQTT publisher disconnected before the PUBACK; "
                              "the broker may have the message"));
  }
  DropClient();
  for (MqttResult& result : finished_) done->push_back(std::move(result));
  finished_.clear();
}

absl::Status MosquittoPublisher::Rewatch() {
  if (state_ == State::kDisconnected || mosq_ == nullptr)
    return absl::OkStatus();
  const int socket = mosquitto_socket(mosq_);
  if (socket != watched_fd_ && watched_fd_ >= 0) poller_->Forget(watched_fd_);
  if (socket < 0) {
    watched_fd_ = -1;
    return absl::OkStatus();
  }
  const uint32_t events =
      Poller::kReadable |
      (mosquitto_want_write(mosq_) ? uint32_t{Poller::kWritable} : 0u);
  if (socket == watched_fd_ && events == watched_events_) {
    return absl::OkStatus();
  }
  absl::Status watched = poller_->Watch(socket, events);
  watched_fd_ = watched.ok() ? socket : -1;
  watched_events_ = watched.ok() ? events : 0;
  return watched;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MqttPublisher>> MqttPublisher::Create(
    MqttOptions options) {
  OUTBOX_RETURN_IF_ERROR(CheckMqttOptions(options));
  auto publisher = std::make_unique<MosquittoPublisher>(std::move(options));
  OUTBOX_RETURN_IF_ERROR(publisher->Init());
  return std::unique_ptr<MqttPublisher>(std::move(publisher));
}

}  // namespace outbox
