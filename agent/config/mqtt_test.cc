// Copyright (c) edge-outbox authors.
//
// The `mqtt` part of a destination: what is accepted, its defaults, and
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

class ConfigMqttTest : public ::testing::Test {
 protected:
  absl::StatusOr<AgentConfig> Parse(const std::string& text) {
    return ParseAgentConfig(text, dir_.Sub("cfg.textproto"));
  }

  // A destination "fleet" with `mqtt_fields` inside `mqtt {}` and `fields`
  // beside it.
  static std::string Fleet(const std::string& mqtt_fields,
                           const std::string& fields = "") {
    return absl::StrCat("destinations {\n  name: \"fleet\"\n  mqtt {\n",
                        mqtt_fields, "  }\n", fields, "}\n");
  }

  static std::string Minimal(const std::string& broker = "mqtt://10.0.0.5") {
    return absl::StrCat("    broker: \"", broker,
                        "\"\n    client_id: \"till-7\"\n"
                        "    topic: \"fleet/{device}/events/{type}\"\n");
  }

  std::string ErrorOf(const std::string& text) {
    absl::StatusOr<AgentConfig> config = Parse(text);
    EXPECT_FALSE(config.ok());
    return std::string(config.status().message());
  }

  testing::TempDir dir_;
};

TEST_F(ConfigMqttTest, MinimalDestinationTakesTheDefaults) {
  absl::StatusOr<AgentConfig> config = Parse(Fleet(Minimal()));
  ASSERT_OUTBOX_OK(config);
  const Destination& d = config->destinations[0];
  EXPECT_EQ(d.kind, Destination::Kind::kMqtt);
  EXPECT_EQ(d.mqtt.host, "10.0.0.5");
  EXPECT_EQ(d.mqtt.port, 1883);
  EXPECT_FALSE(d.mqtt.use_tls);
  EXPECT_EQ(d.mqtt.client_id, "till-7");
  EXPECT_EQ(d.mqtt.topic, "fleet/{device}/events/{type}");
  EXPECT_EQ(d.mqtt.keepalive_seconds, 60);
  EXPECT_EQ(d.mqtt.session_expiry, absl::Hours(168));
  EXPECT_EQ(d.connect_timeout, absl::Seconds(10));
  EXPECT_TRUE(d.mqtt.password.empty());
}

TEST_F(ConfigMqttTest, AnswersNamePubackReasonCodes) {
  absl::StatusOr<AgentConfig> config =
      Parse(Fleet(Minimal(), "  answers { key: 151 value: \"hold\" }\n"));
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->destinations[0].retry.answers.at(0x97),
            DeliveryOutcome::kHoldDestination);
  EXPECT_THAT(
      ErrorOf(Fleet(Minimal(), "  answers { key: 16 value: \"retry\" }\n")),
      HasSubstr("PUBACK reason code 16 cannot be given a meaning: use "
                "128..255"));
  EXPECT_THAT(
      ErrorOf(Fleet(Minimal(), "  answers { key: 503 value: \"retry\" }\n")),
      HasSubstr("use 128..255"));
}

// 0x80 ("Unspecified error") is the lowest refusing reason code, so the
// lowest an entry may name; 0x7F would be a success code's.
TEST_F(ConfigMqttTest, AnswersMayNameTheLowestRefusingCode) {
  absl::StatusOr<AgentConfig> config = Parse(
      Fleet(Minimal(), "  answers { key: 128 value: \"dead_letter\" }\n"));
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->destinations[0].retry.answers.at(0x80),
            DeliveryOutcome::kDeadLetter);
  EXPECT_THAT(
      ErrorOf(Fleet(Minimal(), "  answers { key: 127 value: \"retry\" }\n")),
      HasSubstr("PUBACK reason code 127 cannot be given a meaning"));
}

TEST_F(ConfigMqttTest, MqttsDefaultsToPort8883AndAnExplicitPortWins) {
  absl::StatusOr<AgentConfig> tls =
      Parse(Fleet(Minimal("mqtts://broker.example.com")));
  ASSERT_OUTBOX_OK(tls);
  EXPECT_TRUE(tls->destinations[0].mqtt.use_tls);
  EXPECT_EQ(tls->destinations[0].mqtt.port, 8883);
  absl::StatusOr<AgentConfig> v6 = Parse(Fleet(Minimal("mqtt://[::1]:2883")));
  ASSERT_OUTBOX_OK(v6);
  EXPECT_EQ(v6->destinations[0].mqtt.host, "::1");
  EXPECT_EQ(v6->destinations[0].mqtt.port, 2883);
}

TEST_F(ConfigMqttTest, BrokerUrlsThatAreNotMqttAreRejected) {
  EXPECT_THAT(ErrorOf(Fleet(Minimal("https://h"))),
              HasSubstr("does not start with mqtt:// or mqtts://"));
  EXPECT_THAT(ErrorOf(Fleet(Minimal("mqtt://h:0"))),
              HasSubstr("port that is not 1..65535"));
  EXPECT_THAT(ErrorOf(Fleet(Minimal("mqtt://h/fleet"))), HasSubstr("path"));
  EXPECT_THAT(ErrorOf(Fleet(Minimal("mqtt://:1883"))), HasSubstr("no host"));
}

TEST_F(ConfigMqttTest, CredentialsInTheBrokerUrlAreRejectedWithoutEcho) {
  const std::string error = ErrorOf(Fleet(Minimal("mqtt://user:hunter2@h")));
  EXPECT_THAT(error, HasSubstr("carries credentials"));
  EXPECT_THAT(error, Not(HasSubstr("hunter2")));
}

TEST_F(ConfigMqttTest, ClientIdAndTopicAreRequiredAndChecked) {
  EXPECT_THAT(ErrorOf(Fleet("    broker: \"mqtt://h\"\n    topic: \"t\"\n")),
              HasSubstr("client_id: is required"));
  EXPECT_THAT(ErrorOf(Fleet("    broker: \"mqtt://h\"\n    client_id: \"a b\"\n"
                            "    topic: \"t\"\n")),
              HasSubstr("client_id: is not"));
  EXPECT_THAT(ErrorOf(Fleet("    broker: \"mqtt://h\"\n    client_id: \"c\"\n"
                            "    topic: \"fleet/{store}\"\n")),
              HasSubstr("topic:"));
  EXPECT_THAT(ErrorOf(Fleet("    broker: \"mqtt://h\"\n    client_id: \"c\"\n"
                            "    topic: \"fleet/#\"\n")),
              HasSubstr("topic:"));
}

TEST_F(ConfigMqttTest, HttpFieldsBesideMqttAreRejected) {
  for (const std::string& field :
       {std::string("url: \"https://h\""), std::string("timeout: \"5s\""),
        std::string("proxy: \"http://p:3128\""),
        std::string("headers { key: \"X-A\" value: \"b\" }")}) {
    EXPECT_THAT(ErrorOf(Fleet(Minimal(), "  " + field + "\n")),
                HasSubstr("does not apply to an `mqtt` destination"))
        << field;
  }
}

TEST_F(ConfigMqttTest, PasswordComesFromAPrivateFileAndIsNeverEchoed) {
  const std::string path = dir_.Sub("broker.pass");
  std::ofstream(path) << "s3cret-pw\n";
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  absl::StatusOr<AgentConfig> config = Parse(
      Fleet(Minimal() +
            "    username: \"till\"\n    password_file: \"broker.pass\"\n"));
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->destinations[0].mqtt.username, "till");
  EXPECT_EQ(config->destinations[0].mqtt.password, "s3cret-pw");

  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  absl::StatusOr<AgentConfig> open = Parse(
      Fleet(Minimal() +
            "    username: \"till\"\n    password_file: \"broker.pass\"\n"));
  EXPECT_EQ(open.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(open.status().message(), HasSubstr("password_file"));
  EXPECT_THAT(open.status().message(), Not(HasSubstr("s3cret")));
}

TEST_F(ConfigMqttTest, KeepaliveAndSessionExpiryAreBounded) {
  EXPECT_THAT(ErrorOf(Fleet(Minimal() + "    keepalive: \"2s\"\n")),
              HasSubstr("5s to 65535s"));
  EXPECT_THAT(ErrorOf(Fleet(Minimal() + "    keepalive: \"1.5s\"\n")),
              HasSubstr("whole seconds"));
  absl::StatusOr<AgentConfig> config = Parse(
      Fleet(Minimal() + "    keepalive: \"30s\"\n    session_expiry: \"0\"\n"));
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->destinations[0].mqtt.keepalive_seconds, 30);
  EXPECT_EQ(config->destinations[0].mqtt.session_expiry, absl::ZeroDuration());
}

TEST_F(ConfigMqttTest, WorkflowStepsCannotTargetAnMqttDestination) {
  const std::string error =
      ErrorOf(Fleet(Minimal()) +
              "workflows {\n  event_type: \"sale\"\n"
              "  steps { name: \"a\" destination: \"fleet\" }\n}\n");
  EXPECT_THAT(error, HasSubstr("is an MQTT destination; workflow steps need "
                               "HTTP ones"));
}

}  // namespace
}  // namespace outbox
