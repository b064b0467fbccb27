// Copyright (c) edge-outbox authors.
//
// Command-line splitting and the usage-error marker.

#include "tools/ctl/args.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox::ctl {
namespace {

constexpr FlagSpec kSpecs[] = {{"json", false}, {"limit", true}};

TEST(CtlParseArgsTest, AcceptsBothValueFormsAndPositionals) {
  absl::StatusOr<ParsedArgs> a =
      ParseArgs({"pending", "--limit", "5", "--json"}, kSpecs);
  ASSERT_OUTBOX_OK(a);
  EXPECT_EQ(a->Value("limit"), "5");
  EXPECT_TRUE(a->Has("json"));
  EXPECT_EQ(a->positional, std::vector<std::string>{"pending"});
  a = ParseArgs({"--limit=--7"}, kSpecs);
  ASSERT_OUTBOX_OK(a);
  EXPECT_EQ(a->Value("limit"), "--7");
}

TEST(CtlParseArgsTest, TakesAValueThatStartsWithOneDash) {
  absl::StatusOr<ParsedArgs> a = ParseArgs({"--limit", "-1"}, kSpecs);
  ASSERT_OUTBOX_OK(a);
  EXPECT_EQ(a->Value("limit"), "-1");
}

TEST(CtlParseArgsTest, ErrorsAreUsageErrors) {
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--nope"},
                                             {"--limit"},
                                             {"--limit", "--json"},
                                             {"--json=1"},
                                             {"--json", "--json"},
                                             {"-x"}}) {
    absl::StatusOr<ParsedArgs> a = ParseArgs(bad, kSpecs);
    EXPECT_STATUS_CODE(a, absl::StatusCode::kInvalidArgument) << bad[0];
    EXPECT_TRUE(IsUsageError(a.status())) << bad[0];
  }
}

TEST(CtlParseArgsTest, DoubleDashEndsFlags) {
  absl::StatusOr<ParsedArgs> a = ParseArgs({"--", "--json", "-x"}, kSpecs);
  ASSERT_OUTBOX_OK(a);
  EXPECT_FALSE(a->Has("json"));
  EXPECT_EQ(a->positional, (std::vector<std::string>{"--json", "-x"}));
}

TEST(CtlUsageErrorTest, IsDistinctFromOtherInvalidArguments) {
  EXPECT_TRUE(IsUsageError(UsageError("x")));
  EXPECT_FALSE(IsUsageError(absl::InvalidArgumentError("x")));
}

TEST(CtlParseCountTest, AcceptsOneToMaxOnly) {
  absl::StatusOr<size_t> n = ParseCount("limit", "7", 10);
  ASSERT_OUTBOX_OK(n);
  EXPECT_EQ(*n, 7u);
  for (const char* bad : {"0", "11", "-1", "+3", "x", "", "1.5"}) {
    EXPECT_TRUE(IsUsageError(ParseCount("limit", bad, 10).status())) << bad;
  }
}

}  // namespace
}  // namespace outbox::ctl
