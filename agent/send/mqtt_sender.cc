// Copyright (c) edge-outbox authors.

#include "agent/send/mqtt_sender.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/crash_points.h"
#include "platform/mqtt_publisher.h"
#include "platform/mqtt_status.h"
#include "platform/mqtt_topic.h"

namespace outbox {
namespace {

MqttOptions OptionsFor(const Destination& d) {
  MqttOptions o;
  o.host = d.mqtt.host;
  o.port = d.mqtt.port;
  o.client_id = d.mqtt.client_id;
  o.username = d.mqtt.username;
  o.password = d.mqtt.password;
  o.use_tls = d.mqtt.use_tls;
  o.tls = d.tls;
  o.keepalive_seconds = d.mqtt.keepalive_seconds;
  o.session_expiry_seconds =
      static_cast<uint32_t>(absl::ToInt64Seconds(d.mqtt.session_expiry));
  o.connect_timeout = d.connect_timeout;
  return o;
}

}  // namespace

SendResult SendResultFromMqtt(const MqttResult& r) {
  SendResult out;
  out.tag = r.tag;
  if (r.reason_code < 0) {
    // No PUBACK: the connection went first (the broker may have the
    // message), or the agent abandoned it.
    out.transport =
        r.status.ok() ? absl::UnavailableError("no PUBACK") : r.status;
    return out;
  }
  // The broker answered.
  out.reason_code = r.reason_code;
  out.answer = absl::StrFormat("PUBACK 0x%02x", r.reason_code);
  if (r.status.ok()) {
    out.outcome = DeliveryOutcome::kDelivered;
  } else {
    out.answer = absl::StrCat("PUBACK: ", r.status.message());
    // Not authorized (the broker's ACL) refuses this client, as an HTTP
    // 403 does: held, not dead-lettered, until the ACL is fixed.
    out.outcome =
        absl::IsInvalidArgument(r.status)    ? DeliveryOutcome::kDeadLetter
        : absl::IsPermissionDenied(r.status) ? DeliveryOutcome::kHoldDestination
                                             : DeliveryOutcome::kRetry;
  }
  return out;
}

namespace {

// REQUIRES: External synchronization (the agent's thread).
class MqttSender final : public Sender {
 public:
  MqttSender(std::unique_ptr<MqttPublisher> publisher, MqttTopicTemplate topic,
             std::string device)
      : publisher_(std::move(publisher)),
        topic_(std::move(topic)),
        device_(std::move(device)) {}

  ~MqttSender() override {
    std::vector<SendResult> abandoned;  // left pending; resent next time
    AbandonAll(&abandoned);
  }

  absl::Status Start(const PendingEvent& event, const Destination& destination,
                     absl::Time now, uint64_t tag) override;
  int fd() const override { return publisher_->fd(); }
  absl::Status Process(absl::Time now, std::vector<SendResult>* done) override;
  size_t InFlight() const override {
    return publisher_->InFlight() + waiting_.size();
  }
  void AbandonAll(std::vector<SendResult>* done) override;

 private:
  // Publishes what waited for the connection, in order.
  void PublishWaiting(std::vector<SendResult>* done);

  std::unique_ptr<MqttPublisher> publisher_;
  const MqttTopicTemplate topic_;
  const std::string device_;  // {device}: the client id
  // Started while the connection was being set up; published once it is.
  std::vector<MqttMessage> waiting_;
};

absl::Status MqttSender::Start(const PendingEvent& event, const Destination&,
                               absl::Time, uint64_t tag) {
  absl::StatusOr<std::string> topic =
      topic_.Expand({{"device", device_}, {"type", event.type}});
  if (!topic.ok()) return topic.status();  // never sendable: dead letter
  MqttMessage m;
  m.tag = tag;
  m.topic = *std::move(topic);
  m.payload = event.payload;
  m.content_type = event.content_type;
  m.event_id = event.id;
  m.event_type = event.type;
  m.ordering_key = event.ordering_key;
  switch (publisher_->state()) {
    case MqttPublisher::State::kConnected:
      internal::CrashPoint(internal::kAgentBeforeSend);
      return publisher_->Publish(m);
    case MqttPublisher::State::kConnecting:
      waiting_.push_back(std::move(m));
      return absl::OkStatus();
    case MqttPublisher::State::kDisconnected:
      break;
  }
  absl::Status connecting = publisher_->Connect();
  if (!connecting.ok()) {
    // Nothing was sent. TLS files that cannot be used are a setting to fix,
    // not a property of this event.
    return absl::IsInvalidArgument(connecting)
               ? absl::FailedPreconditionError(connecting.message())
               : connecting;
  }
  waiting_.push_back(std::move(m));
  return absl::OkStatus();
}

absl::Status MqttSender::Process(absl::Time, std::vector<SendResult>* done) {
  std::vector<MqttResult> results;
  absl::Status s = publisher_->Process(&results);
  for (const MqttResult& r : results) done->push_back(SendResultFromMqtt(r));
  if (waiting_.empty()) return s;
  switch (publisher_->state()) {
    case MqttPublisher::State::kConnected:
      PublishWaiting(done);
      break;
    case MqttPublisher::State::kConnecting:
      break;
    case MqttPublisher::State::kDisconnected: {
      // The connection never came up (refused, TLS, no CONNACK in time):
      // nothing was sent.
      const absl::Status why = publisher_->connection_status();
      for (const MqttMessage& m : waiting_) {
        SendResult r;
        r.tag = m.tag;
        r.offline = !absl::IsFailedPrecondition(why);
        r.transport = why.ok() ? absl::UnavailableError("not connected") : why;
        done->push_back(std::move(r));
      }
      waiting_.clear();
      break;
    }
  }
  return s;
}

void MqttSender::PublishWaiting(std::vector<SendResult>* done) {
  std::vector<MqttMessage> waiting;
  waiting.swap(waiting_);
  for (const MqttMessage& m : waiting) {
    internal::CrashPoint(internal::kAgentBeforeSend);
    absl::Status published = publisher_->Publish(m);
    if (published.ok()) continue;
    // Refused before anything left (too large for this broker, say, or
    // the connection dropped meanwhile): an attempt that failed, retried
    // under the agent's schedule and limits.
    SendResult r;
    r.tag = m.tag;
    r.transport = published;
    done->push_back(std::move(r));
  }
}

void MqttSender::AbandonAll(std::vector<SendResult>* done) {
  std::vector<MqttResult> results;
  publisher_->Disconnect(&results);
  for (const MqttResult& r : results) done->push_back(SendResultFromMqtt(r));
  for (const MqttMessage& m : waiting_) {
    SendResult r;
    r.tag = m.tag;
    r.transport = absl::CancelledError("abandoned before it was published");
    done->push_back(std::move(r));
  }
  waiting_.clear();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Sender>> NewMqttSender(
    const Destination& destination) {
  // Validated by the configuration already; parsed again for its pieces.
  absl::StatusOr<MqttTopicTemplate> topic =
      MqttTopicTemplate::Parse(destination.mqtt.topic, {"device", "type"});
  if (!topic.ok()) return topic.status();
  absl::StatusOr<std::unique_ptr<MqttPublisher>> publisher =
      MqttPublisher::Create(OptionsFor(destination));
  if (!publisher.ok()) return publisher.status();
  return std::unique_ptr<Sender>(new MqttSender(
      *std::move(publisher), *std::move(topic), destination.mqtt.client_id));
}

}  // namespace outbox
