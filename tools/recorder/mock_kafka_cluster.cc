// Copyright (c) edge-outbox authors.

#include "tools/recorder/mock_kafka_cluster.h"

#include "absl/strings/str_cat.h"

namespace outbox::recorder {
namespace {

// ProduceRequest's Kafka API key (rdkafka_protocol.h, which Debian does not
// ship).
constexpr int16_t kProduceApiKey = 0;

void DropClusterLog(const rd_kafka_t*, int, const char*, const char*) {}

}  // namespace

absl::StatusOr<std::unique_ptr<MockKafkaCluster>> MockKafkaCluster::Start(
    int brokers) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, &DropClusterLog);
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

absl::Status MockKafkaCluster::SetRoundTrip(absl::Duration rtt) {
  const rd_kafka_resp_err_t err = rd_kafka_mock_broker_set_rtt(
      cluster_, /*broker_id=*/-1,
      static_cast<int>(absl::ToInt64Milliseconds(rtt)));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::InternalError(absl::StrCat(
        "mock Kafka cluster: setting the round trip: ", rd_kafka_err2str(err)));
  }
  return absl::OkStatus();
}

void MockKafkaCluster::DelayNextProduceAnswer(int32_t broker_id,
                                              absl::Duration delay) {
  rd_kafka_mock_broker_push_request_error_rtts(
      cluster_, broker_id, kProduceApiKey, 1, RD_KAFKA_RESP_ERR_NO_ERROR,
      static_cast<int>(absl::ToInt64Milliseconds(delay)));
}

}  // namespace outbox::recorder
