// Copyright (c) edge-outbox authors.

#include "tests/testing/kafka_cluster.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "platform/poller.h"

namespace outbox::testing {
namespace {

// ProduceRequest's Kafka API key (rdkafka_protocol.h, which Debian does not
// ship).
constexpr int16_t kProduceApiKey = 0;

void DropLog(const rd_kafka_t*, int, const char*, const char*) {}

}  // namespace

absl::StatusOr<std::unique_ptr<MockKafkaCluster>> MockKafkaCluster::Start(
    int brokers) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, &DropLog);
  char errstr[512];
  rd_kafka_t* rk =
      rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return absl::InternalError(errstr);
  }
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(rk, brokers);
  if (cluster == nullptr) {
    rd_kafka_destroy(rk);
    return absl::InternalError("rd_kafka_mock_cluster_new failed");
  }
  return std::unique_ptr<MockKafkaCluster>(new MockKafkaCluster(rk, cluster));
}

MockKafkaCluster::~MockKafkaCluster() {
  rd_kafka_mock_cluster_destroy(cluster_);
  rd_kafka_destroy(rk_);
}

std::string MockKafkaCluster::bootstrap_servers() const {
  return rd_kafka_mock_cluster_bootstraps(cluster_);
}

absl::Status MockKafkaCluster::CreateTopic(const std::string& topic,
                                           int partitions) {
  const rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(
      cluster_, topic.c_str(), partitions, /*replication_factor=*/1);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("mock topic ", topic, ": ", rd_kafka_err2name(err)));
}

void MockKafkaCluster::SetBrokersDown() {
  rd_kafka_mock_broker_set_down(cluster_, -1);
}

void MockKafkaCluster::SetBrokersUp() {
  rd_kafka_mock_broker_set_up(cluster_, -1);
}

void MockKafkaCluster::FailNextProduces(
    const std::vector<rd_kafka_resp_err_t>& errors) {
  rd_kafka_mock_push_request_errors_array(cluster_, kProduceApiKey,
                                          errors.size(), errors.data());
}

void MockKafkaCluster::DelayNextProduceAnswer(int32_t broker_id,
                                              absl::Duration delay) {
  rd_kafka_mock_broker_push_request_error_rtts(
      cluster_, broker_id, kProduceApiKey, 1, RD_KAFKA_RESP_ERR_NO_ERROR,
      static_cast<int>(absl::ToInt64Milliseconds(delay)));
}

absl::StatusOr<std::vector<ConsumedMessage>> ReadTopic(
    const std::string& bootstrap_servers, const std::string& topic,
    int partitions, absl::Duration timeout) {
  absl::StatusOr<recorder::KafkaConsumer> consumer =
      recorder::NewKafkaConsumer(bootstrap_servers);
  if (!consumer.ok()) return consumer.status();
  rd_kafka_t* rk = consumer->get();
  const absl::Time deadline = absl::Now() + timeout;
  // The log as it is now: what lies below each partition's high watermark.
  int64_t total = 0;
  for (int p = 0; p < partitions; ++p) {
    int64_t low = 0, high = 0;
    const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        rk, topic.c_str(), p, &low, &high,
        static_cast<int>(absl::ToInt64Milliseconds(timeout)));
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return absl::InternalError(
          absl::StrCat("watermarks of ", topic, ": ", rd_kafka_err2name(err)));
    }
    total += high - low;
  }
  absl::Status assigned = recorder::AssignFromBeginning(rk, topic, partitions);
  if (!assigned.ok()) return assigned;
  std::vector<ConsumedMessage> got;
  while (static_cast<int64_t>(got.size()) < total) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("read ", got.size(), " of ", total, " messages"));
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      got.push_back(recorder::ToConsumed(*m));
    }
    rd_kafka_message_destroy(m);
  }
  std::sort(got.begin(), got.end(),
            [](const ConsumedMessage& a, const ConsumedMessage& b) {
              return std::make_pair(a.partition, a.offset) <
                     std::make_pair(b.partition, b.offset);
            });
  return got;
}

bool DriveUntil(KafkaProducer* producer, std::vector<KafkaResult>* results,
                const std::function<bool()>& done, absl::Duration timeout) {
  absl::StatusOr<std::unique_ptr<Poller>> poller = Poller::Create();
  if (!poller.ok() || !(*poller)->Watch(producer->fd(), Poller::kReadable).ok())
    return false;
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<Poller::Ready> ready;
  producer->Process(results);
  while (!done()) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    if (!(*poller)->Wait(left, &ready).ok()) return false;
    producer->Process(results);
  }
  return true;
}

}  // namespace outbox::testing
