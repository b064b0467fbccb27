// Copyright (c) edge-outbox authors.
//
// KafkaRecorder against librdkafka's mock cluster: records produced by the
// project's KafkaProducer come out as outbox-sink log lines that the
// delivery audit's parser reads back, resends marked as duplicates.

#include "tools/recorder/kafka_recorder.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/kafka_producer.h"
#include "tests/testing/kafka_cluster.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tools/audit/sink_log_tail.h"

namespace outbox::recorder {
namespace {

constexpr char kTopic[] = "pos.sale";

class KafkaRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = testing::MockKafkaCluster::Start();
    ASSERT_OUTBOX_OK(cluster);
    cluster_ = std::move(*cluster);
    ASSERT_OUTBOX_OK(cluster_->CreateTopic(kTopic, 2));
  }

  // Produces `messages` and waits for their delivery reports.
  void Produce(const std::vector<KafkaMessage>& messages) {
    KafkaOptions options;
    options.bootstrap_servers = cluster_->bootstrap_servers();
    auto producer = KafkaProducer::Create(options);
    ASSERT_OUTBOX_OK(producer);
    for (const KafkaMessage& m : messages) {
      ASSERT_OUTBOX_OK((*producer)->Produce(m));
    }
    std::vector<KafkaResult> results;
    ASSERT_TRUE(testing::DriveUntil(producer->get(), &results, [&] {
      return results.size() >= messages.size();
    }));
    for (const KafkaResult& r : results) {
      ASSERT_EQ(r.error_code, RD_KAFKA_RESP_ERR_NO_ERROR);
    }
  }

  // The log's lines once `n` records were logged (a hang guard of 30 s).
  std::vector<audit::SinkRequest> LoggedAfter(const KafkaRecorder& recorder,
                                              int64_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (recorder.recorded() < n && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    audit::SinkLogTail tail(log_);
    tail.Poll();
    return tail.requests();
  }

  static KafkaMessage Sale(const std::string& id, int n) {
    KafkaMessage m;
    m.topic = kTopic;
    m.key = "till-1";
    m.event_id = id;
    m.event_type = "sale.created";
    m.content_type = "application/json";
    m.payload = R"({"sale":"till-1","n":)" + std::to_string(n) + "}";
    return m;
  }

  std::unique_ptr<testing::MockKafkaCluster> cluster_;
  testing::TempDir dir_;
  const std::string log_ = dir_.Sub("recorder.log");
};

TEST_F(KafkaRecorderTest, RecordsAreLoggedInTheSinksFormat) {
  auto recorder = KafkaRecorder::Start(cluster_->bootstrap_servers(), kTopic,
                                       2, log_);
  ASSERT_OUTBOX_OK(recorder);
  Produce({Sale("evt_1", 1), Sale("evt_2", 2), Sale("evt_1", 1)});
  const std::vector<audit::SinkRequest> lines = LoggedAfter(**recorder, 3);
  ASSERT_EQ(lines.size(), 3u);
  const std::string ids[] = {"evt_1", "evt_2", "evt_1"};
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].id, ids[i]);
    EXPECT_EQ(lines[i].method, "PRODUCE");
    EXPECT_EQ(lines[i].path.rfind("pos.sale/", 0), 0u) << lines[i].path;
    EXPECT_TRUE(lines[i].ok());
    EXPECT_FALSE(lines[i].signature_valid);  // Kafka carries none
    EXPECT_EQ(lines[i].sale, "till-1");
    EXPECT_EQ(lines[i].n, i == 1 ? 2 : 1);
  }
  EXPECT_FALSE(lines[0].duplicate);
  EXPECT_FALSE(lines[1].duplicate);
  EXPECT_TRUE(lines[2].duplicate);  // the id came before
  EXPECT_OUTBOX_OK((*recorder)->status());
}

TEST_F(KafkaRecorderTest, ARecorderStartedLaterReadsFromTheBeginning) {
  Produce({Sale("evt_1", 1)});
  auto recorder = KafkaRecorder::Start(cluster_->bootstrap_servers(), kTopic,
                                       2, log_);
  ASSERT_OUTBOX_OK(recorder);
  const std::vector<audit::SinkRequest> lines = LoggedAfter(**recorder, 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].id, "evt_1");
}

TEST_F(KafkaRecorderTest, AnUnwritableLogIsAnError) {
  auto recorder = KafkaRecorder::Start(cluster_->bootstrap_servers(), kTopic,
                                       2, dir_.Sub("missing/recorder.log"));
  EXPECT_FALSE(recorder.ok());
}

}  // namespace
}  // namespace outbox::recorder
