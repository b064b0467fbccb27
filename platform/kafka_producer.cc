// Copyright (c) edge-outbox authors.
//
// The librdkafka KafkaProducer. librdkafka's broker threads put delivery
// reports and errors on its main queue; rd_kafka_queue_io_event_enable
// makes the queue write to a Wakeup's eventfd whenever it turns non-empty,
// and Process() serves it with rd_kafka_poll(rk, 0), which runs our
// callbacks on the caller's thread. The callbacks only record outcomes for
// Process() to hand out.

#include "platform/kafka_producer.h"

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "platform/kafka_client_setup.h"
#include "platform/kafka_status.h"
#include "platform/poller.h"

namespace outbox {
namespace {

// The headers Produce() adds, each only when not empty.
constexpr int kHeaders = 3;

class RdKafkaProducer final : public KafkaProducer {
 public:
  RdKafkaProducer() = default;
  ~RdKafkaProducer() override;

  absl::Status Init(const KafkaOptions& options);
  absl::Status connection_status() const override { return status_; }
  int fd() const override { return wakeup_->fd(); }
  bool failed_fatally() const override {
    return rd_kafka_fatal_error(rk_, nullptr, 0) != RD_KAFKA_RESP_ERR_NO_ERROR;
  }
  void Process(std::vector<KafkaResult>* done) override;
  absl::Status Produce(const KafkaMessage& message) override;
  size_t InFlight() const override { return in_flight_.size(); }
  void AbandonAll(std::vector<KafkaResult>* done) override;

 private:
  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message,
                         void* opaque);
  static void OnError(rd_kafka_t* rk, int err, const char* reason,
                      void* opaque);
  void TakeFinished(std::vector<KafkaResult>* done);

  std::unique_ptr<Wakeup> wakeup_;
  rd_kafka_t* rk_ = nullptr;
  // Each message's opaque is its number here, not its tag: a uint64_t tag
  // does not fit a pointer on 32-bit targets.
  uintptr_t last_number_ = 0;
  absl::flat_hash_map<uintptr_t, uint64_t> in_flight_;  // number -> tag
  std::vector<KafkaResult> finished_;                   // for TakeFinished
  absl::Status status_;
  std::string last_transport_error_;  // librdkafka's words, no credentials
};

absl::Status RdKafkaProducer::Init(const KafkaOptions& options) {
  OUTBOX_ASSIGN_OR_RETURN(wakeup_, Wakeup::Create());
  OUTBOX_ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, NewKafkaConf(options));
  rd_kafka_conf_set_opaque(conf, this);
  rd_kafka_conf_set_dr_msg_cb(conf, &OnDelivery);
  rd_kafka_conf_set_error_cb(conf, &OnError);
  char errstr[512] = "";
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (rk_ == nullptr) {
    rd_kafka_conf_destroy(conf);  // rd_kafka_new takes it only on success
    // What is left to fail here are the TLS files and SASL support; the
    // text names the setting, never the password.
    return absl::FailedPreconditionError(
        absl::StrCat("Kafka producer: ", errstr));
  }
  // Eight bytes: an eventfd takes nothing shorter. The queue writes them
  // once per stretch between two serves, from librdkafka's threads.
  const uint64_t one = 1;
  rd_kafka_queue_t* queue = rd_kafka_queue_get_main(rk_);
  rd_kafka_queue_io_event_enable(queue, wakeup_->fd(), &one, sizeof(one));
  rd_kafka_queue_destroy(queue);  // the handle; the wake-up stays on
  // Reports queued before the wake-up was on would wait for the next one.
  wakeup_->Signal();
  return absl::OkStatus();
}

RdKafkaProducer::~RdKafkaProducer() {
  if (rk_ == nullptr) return;
  std::vector<KafkaResult> ignored;
  AbandonAll(&ignored);
  // Nothing is left to flush, so this only joins librdkafka's threads.
  rd_kafka_destroy(rk_);
}

void RdKafkaProducer::OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message,
                                 void* opaque) {
  auto* self = static_cast<RdKafkaProducer*>(opaque);
  auto it =
      self->in_flight_.find(reinterpret_cast<uintptr_t>(message->_private));
  if (it == self->in_flight_.end()) return;  // reported by AbandonAll()
  // A written message proves a broker is up and TLS and SASL work.
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR)
    self->status_ = absl::OkStatus();
  self->finished_.push_back(
      KafkaResult{it->second, KafkaDeliveryStatus(message->err), message->err});
  self->in_flight_.erase(it);
}

void RdKafkaProducer::OnError(rd_kafka_t* rk, int err, const char* reason,
                              void* opaque) {
  auto* self = static_cast<RdKafkaProducer*>(opaque);
  switch (err) {
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN: {
      // A TLS or SASL failure brings every broker down too; it stays the
      // reason, since fixing the settings is what brings them back.
      if (absl::IsFailedPrecondition(self->status_)) return;
      std::string why = reason;
      if (!self->last_transport_error_.empty()) {
        absl::StrAppend(&why, "; last: ", self->last_transport_error_);
      }
      self->status_ = KafkaClusterStatus(err, why);
      return;
    }
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__RESOLVE: {
      absl::Status why = KafkaClusterStatus(err, reason);
      if (absl::IsFailedPrecondition(why)) {  // a TLS failure after all
        self->status_ = std::move(why);
        return;
      }
      // Why a broker went down, for the __ALL_BROKERS_DOWN that follows
      // when it was the last one. Alone it says nothing about the cluster.
      self->last_transport_error_ = reason;
      return;
    }
    case RD_KAFKA_RESP_ERR__SSL:
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
      self->status_ = KafkaClusterStatus(err, reason);
      return;
    case RD_KAFKA_RESP_ERR__FATAL: {
      char underlying[512] = "";
      rd_kafka_fatal_error(rk, underlying, sizeof(underlying));
      self->status_ = KafkaClusterStatus(err, underlying);
      return;
    }
    default:
      // librdkafka retries the rest itself.
      return;
  }
}

void RdKafkaProducer::TakeFinished(std::vector<KafkaResult>* done) {
  for (KafkaResult& result : finished_) done->push_back(std::move(result));
  finished_.clear();
}

void RdKafkaProducer::Process(std::vector<KafkaResult>* done) {
  // Clear first: a report queued after the poll below takes the queue from
  // empty to non-empty again and writes the eventfd anew.
  wakeup_->Clear();
  rd_kafka_poll(rk_, 0);
  TakeFinished(done);
}

absl::Status RdKafkaProducer::Produce(const KafkaMessage& message) {
  if (message.topic.empty()) {
    return absl::InvalidArgumentError("Kafka produce: no topic");
  }
  const uintptr_t number = ++last_number_;
  rd_kafka_vu_t vus[6];
  size_t n = 0;
  vus[n].vtype = RD_KAFKA_VTYPE_TOPIC;
  vus[n++].u.cstr = message.topic.c_str();
  if (!message.key.empty()) {  // else a null key
    vus[n].vtype = RD_KAFKA_VTYPE_KEY;
    vus[n].u.mem.ptr = const_cast<char*>(message.key.data());
    vus[n++].u.mem.size = message.key.size();
  }
  vus[n].vtype = RD_KAFKA_VTYPE_VALUE;
  vus[n].u.mem.ptr = const_cast<char*>(message.payload.data());
  vus[n++].u.mem.size = message.payload.size();
  vus[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[n++].u.i = RD_KAFKA_MSG_F_COPY;  // the caller's strings may go
  vus[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
  vus[n++].u.ptr = reinterpret_cast<void*>(number);
  // The headers go as one list of our own (RD_KAFKA_VTYPE_HEADERS), not
  // one entry each: librdkafka before 2.12 frees per-entry headers twice
  // when produceva fails after making the message (a topic in an error
  // state, e.g. not authorized; confluentinc/librdkafka#4627). Our own list
  // is the message's once produceva succeeds, and still ours if it fails.
  rd_kafka_headers_t* headers = rd_kafka_headers_new(kHeaders);
  const std::pair<const char*, const std::string*> named[kHeaders] = {
      {"event-id", &message.event_id},
      {"event-type", &message.event_type},
      {"content-type", &message.content_type}};
  for (const auto& [name, value] : named) {
    if (value->empty()) continue;
    // Cannot fail for a producer's own list (only a read-only one refuses).
    rd_kafka_header_add(headers, name, -1, value->data(),
                        static_cast<ssize_t>(value->size()));
  }
  vus[n].vtype = RD_KAFKA_VTYPE_HEADERS;
  vus[n++].u.headers = headers;
  rd_kafka_error_t* error = rd_kafka_produceva(rk_, vus, n);
  if (error != nullptr) {
    rd_kafka_headers_destroy(headers);  // still ours: produceva failed
    const rd_kafka_resp_err_t err = rd_kafka_error_code(error);
    rd_kafka_error_destroy(error);
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
      return absl::FailedPreconditionError(
          absl::StrCat("Kafka produce refused: ", status_.message()));
    }
    const absl::Status refused = KafkaDeliveryStatus(err);
    return absl::Status(refused.code(), absl::StrCat("Kafka produce refused: ",
                                                     refused.message()));
  }
  in_flight_[number] = message.tag;
  return absl::OkStatus();
}

void RdKafkaProducer::AbandonAll(std::vector<KafkaResult>* done) {
  // Blocks only until librdkafka's threads have dropped the messages from
  // their queues, not for the broker: what was sent and not yet answered
  // may still be written, and its answer is ignored from now on.
  rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_poll(rk_, 0);  // the purged messages' reports, and any others
  for (const auto& [number, tag] : in_flight_) {
    finished_.push_back(
        KafkaResult{tag, KafkaDeliveryStatus(RD_KAFKA_RESP_ERR__PURGE_INFLIGHT),
                    RD_KAFKA_RESP_ERR__PURGE_INFLIGHT});
  }
  in_flight_.clear();
  TakeFinished(done);
}

}  // namespace

absl::StatusOr<std::unique_ptr<KafkaProducer>> KafkaProducer::Create(
    KafkaOptions options) {
  OUTBOX_RETURN_IF_ERROR(CheckKafkaOptions(options));
  auto producer = std::make_unique<RdKafkaProducer>();
  OUTBOX_RETURN_IF_ERROR(producer->Init(options));
  return std::unique_ptr<KafkaProducer>(std::move(producer));
}

}  // namespace outbox
