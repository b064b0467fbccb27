// Copyright (c) edge-outbox authors.
//
// Untrusted bytes always make valid JSON, and lose nothing: text as text,
// anything else as base64.

#include "tools/json_bytes.h"

#include <string>

#include "gtest/gtest.h"

namespace outbox {
namespace {

TEST(IsValidUtf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));
}

TEST(IsValidUtf8Test, RejectsMalformedSequences) {
  for (const char* bad :
       {"\x80", "\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80",
        "\xF0\x80\x80\x80", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xE2\x82",
        "\xC3", "\xFF"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << "accepted: " << std::string(bad);
  }
}

TEST(SetBytesTest, TextIsAStringAndAnythingElseBase64) {
  nlohmann::ordered_json j;
  SetBytes("text", "h\xC3\xA9", &j);
  SetBytes("bin", std::string("\xFF\x00\x01", 3), &j);
  EXPECT_EQ(DumpJson(j), "{\"text\":\"h\xC3\xA9\",\"bin_base64\":\"/wAB\"}");
}

TEST(DumpJsonTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(DumpJson(std::string("a\"b\\c\n\t\r\b\f\x01\x1f\0/", 14)),
            R"("a\"b\\c\n\t\r\b\f\u0001\u001f\u0000/")");
}

TEST(DumpJsonTest, KeepsMultibyteUtf8AsIs) {
  EXPECT_EQ(DumpJson("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"");
}

TEST(DumpJsonTest, EveryAsciiByteSurvivesDumpThenParse) {
  std::string all;
  for (int c = 0; c < 0x80; ++c) all += static_cast<char>(c);
  all += "\xC2\x9B\xE2\x80\xAE\xF4\x8F\xBF\xBF";  // C1, bidi, U+10FFFF
  const nlohmann::json parsed =
      nlohmann::json::parse(DumpJson(all), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(parsed.is_string()) << DumpJson(all);
  EXPECT_EQ(parsed.get<std::string>(), all);
}

TEST(DumpJsonTest, AStringThatIsNotUtf8StillMakesValidJson) {
  // Callers use SetBytes; should a raw string slip through, the output is
  // still one JSON document rather than an exception or broken line.
  const std::string dumped = DumpJson({{"k",
                                        "a\x80"
                                        "b\xED\xA0\x80"}});
  EXPECT_TRUE(nlohmann::json::accept(dumped)) << dumped;
  EXPECT_EQ(dumped,
            "{\"k\":\"a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"}");
}

}  // namespace
}  // namespace outbox
