// Copyright (c) edge-outbox authors.

#include "tools/demo/demo_options.h"

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

}  // namespace
}  // namespace outbox::demo
