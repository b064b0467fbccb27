// Copyright (c) edge-outbox authors.

#include "agent/kafka_sender.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/crash_points.h"
#include "platform/kafka_producer.h"

namespace outbox {
namespace {

// Whether the producer says the cluster cannot be reached (brokers down,
// TLS or SASL failing), which makes a failure "never left".
bool Unreachable(const absl::Status& cluster) {
  return absl::IsUnavailable(cluster) || absl::IsFailedPrecondition(cluster);
}

// A result that says nothing reached the broker: kUnavailable is offline,
// kFailedPrecondition a TLS/SASL failure (Decide() holds both, neither an
// attempt).
SendResult NeverLeft(uint64_t tag, const absl::Status& why) {
  SendResult out;
  out.tag = tag;
  out.offline = absl::IsUnavailable(why);
  out.transport = why;
  return out;
}

absl::Status TopicMissing(const absl::Status& s) {
  return absl::UnavailableError(
      absl::StrCat(s.message(), "; holding events until the topic exists"));
}

// What a delivery report means for the agent; `cluster` is the producer's
// connection_status() after the report.
SendResult FromKafka(const KafkaResult& r, const absl::Status& cluster) {
  if (absl::IsNotFound(r.status))
    return NeverLeft(r.tag, TopicMissing(r.status));
  if (absl::IsUnavailable(r.status) && Unreachable(cluster)) {
    return NeverLeft(r.tag, cluster);
  }
  SendResult out;
  out.tag = r.tag;
  if (r.status.ok()) {
    out.outcome = DeliveryOutcome::kDelivered;
    out.answer = "Kafka: written";
  } else if (absl::IsInvalidArgument(r.status) ||
             absl::IsPermissionDenied(r.status)) {
    // The broker answered: this record is refused for good. The status
    // names Kafka already (KafkaDeliveryStatus: "Kafka: Broker: ...").
    out.outcome = DeliveryOutcome::kDeadLetter;
    out.answer = std::string(r.status.message());
  } else {
    // Timed out, cancelled, a retriable error librdkafka gave up on: the
    // broker may have it.
    out.transport = r.status;
  }
  return out;
}

// REQUIRES: External synchronization (the agent's thread).
class KafkaSender final : public Sender {
 public:
  KafkaSender(std::unique_ptr<KafkaProducer> producer, std::string topic)
      : producer_(std::move(producer)), topic_(std::move(topic)) {}

  // The producer's destructor purges what is in flight: it stays pending.
  ~KafkaSender() override = default;

  absl::Status Start(const PendingEvent& event, const Destination& destination,
                     absl::Time now, uint64_t tag) override;
  int fd() const override { return producer_->fd(); }
  absl::Status Process(absl::Time, std::vector<SendResult>* done) override {
    std::vector<KafkaResult> results;
    producer_->Process(&results);
    const absl::Status cluster = producer_->connection_status();
    for (const KafkaResult& r : results) done->push_back(FromKafka(r, cluster));
    return absl::OkStatus();
  }
  size_t InFlight() const override { return producer_->InFlight(); }
  void AbandonAll(std::vector<SendResult>* done) override {
    std::vector<KafkaResult> results;
    producer_->AbandonAll(&results);
    const absl::Status cluster = producer_->connection_status();
    for (const KafkaResult& r : results) done->push_back(FromKafka(r, cluster));
  }

 private:
  std::unique_ptr<KafkaProducer> producer_;
  const std::string topic_;  // a template over {type}
};

absl::Status KafkaSender::Start(const PendingEvent& event, const Destination&,
                                absl::Time, uint64_t tag) {
  absl::StatusOr<std::string> topic = KafkaTopicFor(topic_, event.type);
  if (!topic.ok()) return topic.status();  // never sendable: dead letter
  const absl::Status cluster = producer_->connection_status();
  if (Unreachable(cluster) && producer_->InFlight() > 0) {
    // Those in flight wait for a broker; this one would too. With nothing
    // in flight it goes (below): the probe whose delivery clears the status.
    return cluster;
  }
  KafkaMessage m;
  m.tag = tag;
  m.topic = *std::move(topic);
  m.key = event.ordering_key;
  m.payload = event.payload;
  m.event_id = event.id;
  m.event_type = event.type;
  m.content_type = event.content_type;
  internal::CrashPoint(internal::kAgentBeforeSend);
  absl::Status produced = producer_->Produce(m);
  // kNotFound: the cluster said the topic does not exist; nothing left.
  return absl::IsNotFound(produced) ? TopicMissing(produced) : produced;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Sender>> NewKafkaSender(
    const Destination& destination) {
  KafkaOptions options = destination.kafka.producer;
  options.tls = destination.tls;
  absl::StatusOr<std::unique_ptr<KafkaProducer>> producer =
      KafkaProducer::Create(std::move(options));
  if (!producer.ok()) return producer.status();
  return std::unique_ptr<Sender>(
      new KafkaSender(*std::move(producer), destination.kafka.topic));
}

}  // namespace outbox
