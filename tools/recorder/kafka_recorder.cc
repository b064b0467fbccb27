// Copyright (c) edge-outbox authors.

#include "tools/recorder/kafka_recorder.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace outbox::recorder {
namespace {

// librdkafka logs to stderr by default; a recorder's reader wants its log.
void DropRecorderLog(const rd_kafka_t*, int, const char*, const char*) {}

}  // namespace

std::string ConsumedMessage::Header(const std::string& name) const {
  for (const auto& [n, value] : headers) {
    if (n == name) return value;
  }
  return "";
}

// Not a group member: nothing to leave, so no consumer close.
void KafkaConsumerDeleter::operator()(rd_kafka_t* rk) const {
  rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

absl::StatusOr<KafkaConsumer> NewKafkaConsumer(
    const std::string& bootstrap_servers) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, &DropRecorderLog);
  char errstr[512];
  // group.id only because librdkafka's consumer wants one; offsets are
  // never committed, so readers never see each other's place.
  const std::pair<const char*, const char*> settings[] = {
      {"bootstrap.servers", bootstrap_servers.c_str()},
      {"group.id", "outbox-recorder"},
      {"enable.auto.commit", "false"}};
  for (const auto& [name, value] : settings) {
    if (rd_kafka_conf_set(conf, name, value, errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return absl::InternalError(absl::StrCat("Kafka consumer: ", errstr));
    }
  }
  rd_kafka_t* rk =
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return absl::InternalError(absl::StrCat("Kafka consumer: ", errstr));
  }
  return KafkaConsumer(rk);
}

absl::Status AssignFromBeginning(rd_kafka_t* rk, const std::string& topic,
                                 int partitions) {
  rd_kafka_topic_partition_list_t* assignment =
      rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(assignment, topic.c_str(), p)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  }
  const rd_kafka_resp_err_t err = rd_kafka_assign(rk, assignment);
  rd_kafka_topic_partition_list_destroy(assignment);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("assigning ", topic, ": ", rd_kafka_err2name(err)));
}

ConsumedMessage ToConsumed(const rd_kafka_message_t& m) {
  ConsumedMessage got;
  got.partition = m.partition;
  got.offset = m.offset;
  got.has_key = m.key != nullptr;
  if (got.has_key) got.key.assign(static_cast<const char*>(m.key), m.key_len);
  if (m.payload != nullptr) {
    got.payload.assign(static_cast<const char*>(m.payload), m.len);
  }
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&m, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return got;
  }
  const char* name;
  const void* value;
  size_t size;
  for (size_t i = 0;
       rd_kafka_header_get_all(headers, i, &name, &value, &size) ==
       RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    got.headers.emplace_back(
        name, std::string(static_cast<const char*>(value), size));
  }
  return got;
}

sink::LogRecord ToLogRecord(const std::string& topic,
                            const ConsumedMessage& message) {
  sink::LogRecord record;
  const std::string id = message.Header("event-id");
  const std::string type = message.Header("event-type");
  const std::string content_type = message.Header("content-type");
  if (!id.empty()) record.id = id;
  if (!type.empty()) record.type = type;
  if (!content_type.empty()) record.content_type = content_type;
  record.received = absl::Now();
  record.method = "PRODUCE";
  record.path = absl::StrCat(topic, "/", message.partition);
  record.status = 200;
  record.body = message.payload;
  return record;
}

absl::StatusOr<std::unique_ptr<KafkaRecorder>> KafkaRecorder::Start(
    const std::string& bootstrap_servers, const std::string& topic,
    int partitions, const std::string& log_path) {
  absl::StatusOr<KafkaConsumer> consumer = NewKafkaConsumer(bootstrap_servers);
  if (!consumer.ok()) return consumer.status();
  absl::Status assigned =
      AssignFromBeginning(consumer->get(), topic, partitions);
  if (!assigned.ok()) return assigned;
  absl::StatusOr<std::unique_ptr<DeliveryLog>> log =
      DeliveryLog::Open(log_path);
  if (!log.ok()) return log.status();
  auto recorder = std::unique_ptr<KafkaRecorder>(
      new KafkaRecorder(*std::move(consumer), topic, *std::move(log)));
  recorder->thread_ = std::thread([r = recorder.get()] { r->Run(); });
  return recorder;
}

KafkaRecorder::~KafkaRecorder() {
  stop_ = true;
  thread_.join();
}

void KafkaRecorder::Run() {
  while (!stop_) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) Log(ToConsumed(*m));
    rd_kafka_message_destroy(m);
  }
}

void KafkaRecorder::Log(const ConsumedMessage& message) {
  log_->Append(ToLogRecord(topic_, message));
  ++recorded_;
}

}  // namespace outbox::recorder
