// Copyright (c) edge-outbox authors.
//
// Stored strings reach the operator's terminal only escaped.

#include "tools/ctl/text.h"

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace outbox::ctl {
namespace {

TEST(CtlSafeForTerminalTest, RejectsMalformedUtf8) {
  EXPECT_TRUE(IsSafeForTerminal("plain \xC3\xA9 \xE2\x82\xAC \xF4\x8F\xBF\xBF",
                                /*allow_newlines=*/false));
  for (const char* bad :
       {"\x80", "\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80",
        "\xF0\x80\x80\x80", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xE2\x82",
        "\xC3", "\xFF"}) {
    EXPECT_FALSE(IsSafeForTerminal(bad, /*allow_newlines=*/true))
        << "accepted: " << std::string(bad);
  }
}

TEST(CtlQuoteTest, LeavesPlainWordsBare) {
  EXPECT_EQ(Quote("sale.created"), "sale.created");
  EXPECT_EQ(Quote("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(CtlQuoteTest, QuotesEmptyAndSpacedValues) {
  EXPECT_EQ(Quote(""), "\"\"");
  EXPECT_EQ(Quote("HTTP 503"), "\"HTTP 503\"");
  EXPECT_EQ(Quote("a=b"), "\"a=b\"");
  EXPECT_EQ(Quote("say \"hi\"\\"), R"("say \"hi\"\\")");
}

TEST(CtlQuoteTest, EscapesWhatATerminalWouldInterpret) {
  EXPECT_EQ(Quote("\x1b[2Jx\n"), R"("\x1b[2Jx\n")");
  EXPECT_EQ(Quote("a\xC2\x9B"
                  "b"),
            R"("a\u{009b}b")");  // C1 CSI
  EXPECT_EQ(Quote("a\xE2\x80\xAE"
                  "b"),
            R"("a\u{202e}b")");             // bidi override
  EXPECT_EQ(Quote("a\xFF"), R"("a\xff")");  // not UTF-8
}

TEST(CtlSafeForTerminalTest, AllowsNewlinesOnlyWhenAsked) {
  EXPECT_TRUE(IsSafeForTerminal("a\nb\tc", /*allow_newlines=*/true));
  EXPECT_FALSE(IsSafeForTerminal("a\nb", /*allow_newlines=*/false));
  EXPECT_FALSE(
      IsSafeForTerminal("a\x1b"
                        "b",
                        /*allow_newlines=*/true));
  EXPECT_FALSE(IsSafeForTerminal("a\x7f", /*allow_newlines=*/true));
}

TEST(CtlFormatRfc3339Test, IsUtcWithMilliseconds) {
  EXPECT_EQ(FormatRfc3339(absl::FromUnixMillis(1767225600123)),
            "2026-01-01T00:00:00.123Z");
  EXPECT_EQ(FormatTimeOr(absl::InfinitePast(), "none"), "none");
}

}  // namespace
}  // namespace outbox::ctl
