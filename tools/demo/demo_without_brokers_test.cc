// Copyright (c) edge-outbox authors.
//
// outbox-demo as a build without MQTT and Kafka has it (linked with
// mqtt_receiver_none.cc and kafka_receiver_none.cc, whatever this build
// has): --transport mqtt and kafka are usage errors that say how to build
// them in, and webhook and batch still parse.

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tools/demo/demo_options.h"
#include "tools/demo/receiver.h"

namespace outbox::demo {
namespace {

TEST(DemoWithoutBrokersTest, MqttAndKafkaAreUsageErrorsSayingWhatToBuildWith) {
  for (const char* flag : {"--transport=mqtt", "--transport=kafka"}) {
    auto o = ParseDemoFlags({flag}, nullptr);
    ASSERT_FALSE(o.ok()) << flag;
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(o.status().message(), "built without"))
        << o.status();
  }
  EXPECT_TRUE(absl::StrContains(MqttTransportBuilt().message(),
                                "OUTBOX_WITH_MQTT"));
  EXPECT_TRUE(absl::StrContains(KafkaTransportBuilt().message(),
                                "OUTBOX_WITH_KAFKA"));
}

TEST(DemoWithoutBrokersTest, MakeReceiverRefusesWhatIsNotBuilt) {
  DemoOptions options;
  options.transport = Transport::kKafka;
  auto receiver = MakeReceiver(options, {});
  ASSERT_FALSE(receiver.ok());
  EXPECT_EQ(receiver.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(DemoWithoutBrokersTest, WebhookAndBatchStillParse) {
  auto batch = ParseDemoFlags({"--transport", "batch"}, nullptr);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->transport, Transport::kBatch);
  auto webhook = ParseDemoFlags({"--transport", "webhook"}, nullptr);
  ASSERT_TRUE(webhook.ok()) << webhook.status();
}

}  // namespace
}  // namespace outbox::demo
