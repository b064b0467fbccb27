// Copyright (c) edge-outbox authors.

#include "platform/mqtt_topic.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kKnown = {"device", "type"};

absl::Status ParseError(const std::string& text) {
  return MqttTopicTemplate::Parse(text, kKnown).status();
}

TEST(MqttTopicTemplateTest, ExpandsPlaceholders) {
  absl::StatusOr<MqttTopicTemplate> t =
      MqttTopicTemplate::Parse("fleet/{device}/events/{type}", kKnown);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<std::string> topic =
      t->Expand({{"device", "till-7"}, {"type", "sale.created"}});
  ASSERT_TRUE(topic.ok()) << topic.status();
  EXPECT_EQ(*topic, "fleet/till-7/events/sale.created");
}

TEST(MqttTopicTemplateTest, PlaceholderInsideALevel) {
  absl::StatusOr<MqttTopicTemplate> t =
      MqttTopicTemplate::Parse("fleet/dev-{device}", kKnown);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t->Expand({{"device", "7"}}), "fleet/dev-7");
}

TEST(MqttTopicTemplateTest, UnknownPlaceholderIsInvalid) {
  absl::Status s = ParseError("fleet/{site}/events");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("unknown placeholder {site}"));
}

TEST(MqttTopicTemplateTest, EmptyLevelIsInvalid) {
  for (const char* text : {"fleet//events", "/fleet", "fleet/", ""}) {
    EXPECT_EQ(ParseError(text).code(), absl::StatusCode::kInvalidArgument)
        << text;
  }
  EXPECT_THAT(ParseError("a//b").message(), HasSubstr("empty level"));
}

TEST(MqttTopicTemplateTest, WildcardsAreInvalid) {
  for (const char* text : {"fleet/+/events", "fleet/#", "fleet/a#"}) {
    absl::Status s = ParseError(text);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(s.message(), HasSubstr("wildcards")) << text;
  }
}

TEST(MqttTopicTemplateTest, DollarTopicsAndBadBracesAreInvalid) {
  for (const char* text :
       {"$SYS/x", "fleet/{device", "fleet/device}", "fleet/{dev/ice}"}) {
    EXPECT_EQ(ParseError(text).code(), absl::StatusCode::kInvalidArgument)
        << text;
  }
}

TEST(MqttTopicTemplateTest, ValueThatWouldChangeTheLevelsIsRejected) {
  absl::StatusOr<MqttTopicTemplate> t =
      MqttTopicTemplate::Parse("fleet/{device}/events/{type}", kKnown);
  ASSERT_TRUE(t.ok());
  for (const std::string& bad : {std::string("a/b"), std::string("+"),
                                 std::string("#"), std::string("a\0b", 3)}) {
    absl::StatusOr<std::string> topic =
        t->Expand({{"device", bad}, {"type", "x"}});
    EXPECT_EQ(topic.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(topic.status().message(), HasSubstr("{device}"));
  }
}

TEST(MqttTopicTemplateTest, MissingOrEmptyValueIsRejected) {
  absl::StatusOr<MqttTopicTemplate> t =
      MqttTopicTemplate::Parse("fleet/{device}", kKnown);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->Expand({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t->Expand({{"device", ""}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace outbox
