// Copyright (c) edge-outbox authors.

#include "tools/demo/demo_options.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace outbox::demo {
namespace {

TEST(DemoOptionsTest, ShortFlagPicksTheShortStoryAndFlagsOverrideIt) {
  auto o =
      ParseDemoFlags({"--sales=12", "--short", "--dir", "/tmp/x"}, nullptr);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->short_mode);
  EXPECT_EQ(o->sales, 12);
  EXPECT_EQ(o->dir, "/tmp/x");
  EXPECT_EQ(o->offline, absl::Seconds(1));
}

TEST(DemoOptionsTest, EnvironmentPicksTheShortStory) {
  auto o = ParseDemoFlags({}, "1");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->short_mode);
  EXPECT_EQ(o->sales, 40);
  auto full = ParseDemoFlags({}, "0");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_FALSE(full->short_mode);
  EXPECT_EQ(full->sales, 300);
}

TEST(DemoOptionsTest, BadValuesNameTheFlag) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--tills", "1"},
                                             {"--sales", "x"},
                                             {"--rate=0"},
                                             {"--offline-seconds", "-1"},
                                             {"--seed"},
                                             {"--transport", "amqp"},
                                             {"--bogus", "1"},
                                             {"stray"}}) {
    auto o = ParseDemoFlags(args, nullptr);
    ASSERT_FALSE(o.ok()) << args[0];
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(o.status().message().find(args[0].substr(0, 5)),
              absl::string_view::npos)
        << o.status();
  }
}

TEST(DemoOptionsTest, BatchStoryHasMoreSalesUnlessTheFlagsSayOtherwise) {
  auto o = ParseDemoFlags({"--short", "--transport", "batch"}, nullptr);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->sales, 160);
  EXPECT_EQ(o->rate, 800);
  auto set = ParseDemoFlags({"--sales=50", "--transport=batch"}, nullptr);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->sales, 50);
  EXPECT_EQ(set->rate, 400);
}

TEST(DemoOptionsTest, BrokerStoriesHaveTenTimesTheSales) {
  for (const char* name : {"mqtt", "kafka"}) {
    auto o = ParseDemoFlags({"--short", "--transport", name}, nullptr);
    if (!o.ok()) continue;  // not built: the test below checks the refusal
    EXPECT_EQ(o->sales, 400) << name;
    EXPECT_EQ(o->rate, 1000) << name;
  }
}

TEST(DemoOptionsTest, TransportDefaultsToWebhook) {
  auto o = ParseDemoFlags({"--short"}, nullptr);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->transport, Transport::kWebhook);
}

TEST(DemoOptionsTest, EachTransportParsesIfBuiltAndIsAUsageErrorIfNot) {
  for (Transport t : {Transport::kWebhook, Transport::kBatch,
                      Transport::kMqtt, Transport::kKafka}) {
    auto o = ParseDemoFlags({absl::StrCat("--transport=", TransportName(t))},
                            nullptr);
    if (TransportBuilt(t).ok()) {
      ASSERT_TRUE(o.ok()) << o.status();
      EXPECT_EQ(o->transport, t);
    } else {
      ASSERT_FALSE(o.ok()) << TransportName(t);
      EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(o.status().message().find("built without"),
                absl::string_view::npos)
          << o.status();
    }
  }
  EXPECT_TRUE(TransportBuilt(Transport::kWebhook).ok());
  EXPECT_TRUE(TransportBuilt(Transport::kBatch).ok());
}

}  // namespace
}  // namespace outbox::demo
