// Copyright (c) edge-outbox authors.

#include "agent/send/kafka_sender.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/crash_points.h"
#include "platform/kafka_producer.h"
#include "platform/poller.h"

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

// A message of a producer that failed fatally: it may have been written,
// and a new producer sends it again.
SendResult Unsettled(uint64_t tag, const absl::Status& why) {
  SendResult out;
  out.tag = tag;
  out.transport = absl::UnavailableError(
      absl::StrCat(why.message(), " (sending again from a new producer)"));
  return out;
}

}  // namespace

SendResult SendResultFromKafka(const KafkaResult& r,
                               const absl::Status& cluster, bool fatal) {
  if (fatal && !r.status.ok()) return Unsettled(r.tag, cluster);
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
  } else if (absl::IsInvalidArgument(r.status)) {
    // The broker answered: this record is refused for good. The status
    // names Kafka already (KafkaDeliveryStatus: "Kafka: Broker: ...").
    out.outcome = DeliveryOutcome::kDeadLetter;
    out.answer = std::string(r.status.message());
  } else if (absl::IsPermissionDenied(r.status) ||
             absl::IsFailedPrecondition(r.status)) {
    // The cluster's ACLs refuse this client, or the broker the device's
    // clock (a timestamp out of its bounds), not the record: held until
    // they are fixed, as for an HTTP 401 or 403.
    out.outcome = DeliveryOutcome::kHoldDestination;
    out.answer = std::string(r.status.message());
  } else {
    // Timed out, cancelled, a retriable error librdkafka gave up on: the
    // broker may have it.
    out.transport = r.status;
  }
  return out;
}

namespace {

// REQUIRES: External synchronization (the agent's thread).
class KafkaSender final : public Sender {
 public:
  // `poller` watches `producer`'s fd and is the fd the agent polls, so that
  // a new producer (Renew) keeps the agent's fd.
  KafkaSender(KafkaOptions options, std::unique_ptr<Poller> poller,
              std::unique_ptr<KafkaProducer> producer, std::string topic)
      : options_(std::move(options)),
        poller_(std::move(poller)),
        producer_(std::move(producer)),
        topic_(std::move(topic)) {}

  // The producer's destructor purges what is in flight: it stays pending.
  ~KafkaSender() override = default;

  absl::Status Start(const PendingEvent& event, const Destination& destination,
                     absl::Time now, uint64_t tag) override;
  int fd() const override { return poller_->fd(); }
  absl::Status Process(absl::Time, std::vector<SendResult>* done) override {
    std::vector<KafkaResult> results;
    producer_->Process(&results);
    const absl::Status cluster = producer_->connection_status();
    const bool fatal = producer_->failed_fatally();
    for (const KafkaResult& r : results) {
      done->push_back(SendResultFromKafka(r, cluster, fatal));
    }
    return fatal ? Renew(done) : absl::OkStatus();
  }
  size_t InFlight() const override { return producer_->InFlight(); }
  void AbandonAll(std::vector<SendResult>* done) override {
    std::vector<KafkaResult> results;
    producer_->AbandonAll(&results);
    const absl::Status cluster = producer_->connection_status();
    const bool fatal = producer_->failed_fatally();
    for (const KafkaResult& r : results) {
      done->push_back(SendResultFromKafka(r, cluster, fatal));
    }
  }

 private:
  // Replaces a producer that failed fatally, which would otherwise refuse
  // every event from now on. What it had in flight may have been written:
  // each is a failed attempt, retried (same event id) from the new one.
  // Errors: the new producer's (the old one stays; the next call retries).
  absl::Status Renew(std::vector<SendResult>* done);

  const KafkaOptions options_;
  const std::unique_ptr<Poller> poller_;
  std::unique_ptr<KafkaProducer> producer_;
  const std::string topic_;  // a template over {type}
};

absl::Status KafkaSender::Renew(std::vector<SendResult>* done) {
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<KafkaProducer> fresh,
                          KafkaProducer::Create(options_));
  OUTBOX_RETURN_IF_ERROR(poller_->Watch(fresh->fd(), Poller::kReadable));
  const absl::Status why = producer_->connection_status();
  std::vector<KafkaResult> abandoned;
  producer_->AbandonAll(&abandoned);
  poller_->Forget(producer_->fd());
  producer_ = std::move(fresh);
  for (const KafkaResult& r : abandoned) {
    done->push_back(Unsettled(r.tag, why));
  }
  return absl::OkStatus();
}

absl::Status KafkaSender::Start(const PendingEvent& event, const Destination&,
                                absl::Time, uint64_t tag) {
  absl::StatusOr<std::string> topic = KafkaTopicFor(topic_, event.type);
  if (!topic.ok()) return topic.status();  // never sendable: dead letter
  if (producer_->failed_fatally()) {
    if (producer_->InFlight() > 0) {
      // Its fatal error is on the way to Process(), which renews it.
      return absl::UnavailableError(
          absl::StrCat(producer_->connection_status().message(),
                       " (a new producer takes over)"));
    }
    std::vector<SendResult> none;  // nothing in flight to report
    OUTBOX_RETURN_IF_ERROR(Renew(&none));
  }
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
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<KafkaProducer> producer,
                          KafkaProducer::Create(options));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Poller> poller, Poller::Create());
  OUTBOX_RETURN_IF_ERROR(poller->Watch(producer->fd(), Poller::kReadable));
  return std::unique_ptr<Sender>(
      new KafkaSender(std::move(options), std::move(poller),
                      std::move(producer), destination.kafka.topic));
}

}  // namespace outbox
