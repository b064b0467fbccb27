// Copyright (c) edge-outbox authors.

#include "tests/testing/kafka_cluster.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "platform/poller.h"

namespace outbox::testing {

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
