// Copyright (c) edge-outbox authors.
//
// The `kafka` part of a destination: what is accepted, its defaults, and
// the errors for what is not.

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/config/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ConfigKafkaTest : public ::testing::Test {
 protected:
  absl::StatusOr<AgentConfig> Parse(const std::string& text) {
    return ParseAgentConfig(text, dir_.Sub("cfg.textproto"));
  }

  // A destination "stream" with `kafka_fields` inside `kafka {}` and
  // `fields` beside it.
  static std::string Stream(const std::string& kafka_fields,
                            const std::string& fields = "") {
    return absl::StrCat("destinations {\n  name: \"stream\"\n  kafka {\n",
                        kafka_fields, "  }\n", fields, "}\n");
  }

  static std::string Minimal(const std::string& topic = "pos.{type}") {
    return absl::StrCat(
        "    bootstrap_servers: \"10.0.0.5:9092,10.0.0.6:9092\"\n"
        "    topic: \"",
        topic, "\"\n");
  }

  std::string ErrorOf(const std::string& text) {
    absl::StatusOr<AgentConfig> config = Parse(text);
    EXPECT_FALSE(config.ok());
    return std::string(config.status().message());
  }

  // A private password file holding "s3cret-pw".
  void WritePassword(mode_t mode = 0600) {
    const std::string path = dir_.Sub("kafka.pass");
    std::ofstream(path) << "s3cret-pw\n";
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
  }

  testing::TempDir dir_;
};

TEST_F(ConfigKafkaTest, MinimalDestinationTakesTheDefaults) {
  absl::StatusOr<AgentConfig> config = Parse(Stream(Minimal()));
  ASSERT_OUTBOX_OK(config);
  const Destination& d = config->destinations[0];
  EXPECT_EQ(d.kind, Destination::Kind::kKafka);
  EXPECT_EQ(d.url, "kafka://10.0.0.5:9092,10.0.0.6:9092");
  EXPECT_EQ(d.kafka.topic, "pos.{type}");
  EXPECT_EQ(d.kafka.producer.bootstrap_servers, "10.0.0.5:9092,10.0.0.6:9092");
  EXPECT_EQ(d.kafka.producer.security, KafkaSecurity::kPlaintext);
  EXPECT_EQ(d.kafka.producer.message_timeout, absl::Minutes(5));
  EXPECT_TRUE(d.kafka.producer.password.empty());
}

TEST_F(ConfigKafkaTest, BootstrapServersAreRequiredAsHostPort) {
  EXPECT_THAT(ErrorOf(Stream("    topic: \"t\"\n")),
              HasSubstr("bootstrap_servers: is required"));
  EXPECT_THAT(ErrorOf(Stream("    bootstrap_servers: \"k1:9092,k2\"\n"
                             "    topic: \"t\"\n")),
              HasSubstr("\"k2\" is not host:port"));
}

TEST_F(ConfigKafkaTest, TopicIsAFixedNameOrATemplateOverType) {
  ASSERT_OUTBOX_OK(Parse(Stream(Minimal("pos-events"))));
  EXPECT_THAT(ErrorOf(Stream(Minimal("pos/{type}"))),
              HasSubstr("topic: makes a Kafka topic name with characters"));
  EXPECT_THAT(ErrorOf(Stream(Minimal("pos.{device}"))),
              HasSubstr("the only placeholder is {type}"));
  EXPECT_THAT(ErrorOf(Stream(Minimal(std::string(250, 'a')))),
              HasSubstr("longer than 249"));
  EXPECT_THAT(ErrorOf(Stream("    bootstrap_servers: \"k:9092\"\n")),
              HasSubstr("topic: is required"));
}

TEST_F(ConfigKafkaTest, CompressionIsLibrdkafkasCodecAndNoneByDefault) {
  absl::StatusOr<AgentConfig> config = Parse(Stream(Minimal()));
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->destinations[0].kafka.producer.compression, "none");
  for (const char* codec : {"gzip", "snappy", "lz4", "zstd", "none"}) {
    config = Parse(
        Stream(absl::StrCat(Minimal(), "    compression: \"", codec, "\"\n")));
    ASSERT_OUTBOX_OK(config);
    EXPECT_EQ(config->destinations[0].kafka.producer.compression, codec);
  }
  EXPECT_THAT(
      ErrorOf(Stream(absl::StrCat(Minimal(), "    compression: \"brotli\"\n"))),
      HasSubstr("compression: must be \"none\", \"gzip\""));
}

TEST_F(ConfigKafkaTest, KafkaTopicForRejectsTypesOutsideKafkasAlphabet) {
  absl::StatusOr<std::string> topic = KafkaTopicFor("pos.{type}", "sale");
  ASSERT_OUTBOX_OK(topic);
  EXPECT_EQ(*topic, "pos.sale");
  EXPECT_EQ(KafkaTopicFor("pos.{type}", "sale:created").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ConfigKafkaTest, HttpFieldsAndConnectTimeoutBesideKafkaAreRejected) {
  for (const std::string& field :
       {std::string("url: \"https://h\""), std::string("timeout: \"5s\""),
        std::string("proxy: \"http://p:3128\""),
        std::string("headers { key: \"X-A\" value: \"b\" }")}) {
    EXPECT_THAT(ErrorOf(Stream(Minimal(), "  " + field + "\n")),
                HasSubstr("does not apply to a `kafka` destination"))
        << field;
  }
  EXPECT_THAT(ErrorOf(Stream(Minimal(), "  connect_timeout: \"5s\"\n")),
              HasSubstr("connect_timeout: does not apply"));
  EXPECT_THAT(ErrorOf(Stream(Minimal(), "  batch {}\n")),
              HasSubstr("batch: applies to HTTP destinations only"));
  EXPECT_THAT(ErrorOf(Stream(Minimal(), "  mqtt { broker: \"mqtt://h\" }\n")),
              HasSubstr("a destination is one of the two"));
}

TEST_F(ConfigKafkaTest, SaslNeedsCredentialsAndThePasswordIsNeverEchoed) {
  ASSERT_NO_FATAL_FAILURE(WritePassword());
  const std::string sasl =
      "    security: \"sasl_ssl\"\n    sasl_mechanism: \"SCRAM-SHA-512\"\n"
      "    username: \"till\"\n    password_file: \"kafka.pass\"\n";
  absl::StatusOr<AgentConfig> config = Parse(Stream(Minimal() + sasl));
  ASSERT_OUTBOX_OK(config);
  const KafkaOptions& o = config->destinations[0].kafka.producer;
  EXPECT_EQ(o.security, KafkaSecurity::kSaslSsl);
  EXPECT_EQ(o.sasl_mechanism, "SCRAM-SHA-512");
  EXPECT_EQ(o.username, "till");
  EXPECT_EQ(o.password, "s3cret-pw");

  EXPECT_THAT(ErrorOf(Stream(Minimal() + "    security: \"sasl_plaintext\"\n")),
              HasSubstr("username: is required with SASL"));
  EXPECT_THAT(ErrorOf(Stream(Minimal() + "    username: \"till\"\n")),
              HasSubstr("applies only with security"));
  EXPECT_THAT(ErrorOf(Stream(Minimal() + "    security: \"tls\"\n")),
              HasSubstr("security: must be"));

  ASSERT_NO_FATAL_FAILURE(WritePassword(0644));
  absl::StatusOr<AgentConfig> open = Parse(Stream(Minimal() + sasl));
  EXPECT_EQ(open.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(open.status().message(), HasSubstr("password_file"));
  EXPECT_THAT(open.status().message(), Not(HasSubstr("s3cret")));
}

TEST_F(ConfigKafkaTest, MessageTimeoutIsBounded) {
  EXPECT_THAT(ErrorOf(Stream(Minimal() + "    message_timeout: \"500ms\"\n")),
              HasSubstr("1s..24h"));
  absl::StatusOr<AgentConfig> config =
      Parse(Stream(Minimal() + "    message_timeout: \"30s\"\n"));
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->destinations[0].kafka.producer.message_timeout,
            absl::Seconds(30));
}

TEST_F(ConfigKafkaTest, WorkflowStepsCannotTargetAKafkaDestination) {
  EXPECT_THAT(ErrorOf(Stream(Minimal()) +
                      "workflows {\n  event_type: \"sale\"\n"
                      "  steps { name: \"a\" destination: \"stream\" }\n}\n"),
              HasSubstr("is a Kafka destination; workflow steps need HTTP"));
}

}  // namespace
}  // namespace outbox
