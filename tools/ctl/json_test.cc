// Copyright (c) edge-outbox authors.
//
// The JSON writer always produces valid JSON, and the parser reads it back.

#include <string>

#include "absl/time/time.h"
#include "tools/ctl/json_value.h"
#include "tools/ctl/json_writer.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox::ctl {
namespace {

TEST(CtlJsonQuoteTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\t\r\b\f\x01\x1f\x7f/"),
            R"("a\"b\\c\n\t\r\b\f\u0001\u001f\u007f/")");
}

TEST(CtlJsonQuoteTest, EscapesNulInsideTheString) {
  EXPECT_EQ(JsonQuote(std::string("a\0b", 3)), R"("a\u0000b")");
}

TEST(CtlJsonQuoteTest, KeepsMultibyteUtf8AsIs) {
  EXPECT_EQ(JsonQuote("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"");
}

TEST(CtlJsonQuoteTest, ReplacesEachInvalidByteWithReplacementCharacter) {
  // A stray continuation byte, a truncated sequence and a surrogate.
  EXPECT_EQ(JsonQuote("a\x80"
                      "b\xE2\x82"
                      "c\xED\xA0\x80"),
            R"("a\ufffdb\ufffd\ufffdc\ufffd\ufffd\ufffd")");
}

TEST(CtlJsonWriterTest, SeparatesMembersAndElementsWithCommas) {
  JsonWriter w;
  w.BeginObject().Key("a").Int(-1).Key("b").BeginArray();
  w.Uint(1).String("x").Bool(true).Null().BeginObject().EndObject();
  w.EndArray().Key("c").BeginArray().EndArray().EndObject();
  EXPECT_EQ(w.str(), R"({"a":-1,"b":[1,"x",true,null,{}],"c":[]})");
}

TEST(CtlJsonWriterTest, BytesAreAStringWhenUtf8AndBase64Otherwise) {
  JsonWriter w;
  w.BeginObject()
      .Bytes("text", "h\xC3\xA9")
      .Bytes("bin", std::string("\xFF\x00\x01", 3));
  w.EndObject();
  EXPECT_EQ(w.str(), "{\"text\":\"h\xC3\xA9\",\"bin_base64\":\"/wAB\"}");
}

TEST(CtlJsonWriterTest, TimeIsRfc3339AndUnixMillisOrNullWhenInfinite) {
  JsonWriter w;
  w.BeginObject().Time("t", absl::FromUnixMillis(1767225600123));
  w.Time("never", absl::InfinitePast()).EndObject();
  EXPECT_EQ(w.str(),
            R"({"t":"2026-01-01T00:00:00.123Z","t_unix_ms":1767225600123,)"
            R"("never":null,"never_unix_ms":null})");
}

TEST(CtlJsonRoundTripTest, EveryAsciiByteSurvivesQuoteThenParse) {
  std::string all;
  for (int c = 0; c < 0x80; ++c) all += static_cast<char>(c);
  all += "\xC2\x9B\xE2\x80\xAE\xF4\x8F\xBF\xBF";  // C1, bidi, U+10FFFF
  absl::StatusOr<JsonValue> v = ParseJson(JsonQuote(all));
  ASSERT_OUTBOX_OK(v);
  EXPECT_EQ(v->kind, JsonValue::Kind::kString);
  EXPECT_EQ(v->text, all);
}

TEST(CtlJsonParseTest, ReadsNestedValues) {
  absl::StatusOr<JsonValue> v =
      ParseJson(R"( {"a": [1, -2.5e+3, "s"], "b": {"c": null}, "d": false} )");
  ASSERT_OUTBOX_OK(v);
  const JsonValue* a = v->Find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items.size(), 3u);
  EXPECT_EQ(a->items[1].text, "-2.5e+3");
  EXPECT_EQ(a->items[2].text, "s");
  ASSERT_NE(v->Find("b"), nullptr);
  EXPECT_EQ(v->Find("b")->Find("c")->kind, JsonValue::Kind::kNull);
  EXPECT_EQ(v->Find("d")->kind, JsonValue::Kind::kBool);
  EXPECT_EQ(v->Find("missing"), nullptr);
}

TEST(CtlJsonParseTest, DecodesEscapesIncludingSurrogatePairs) {
  absl::StatusOr<JsonValue> v = ParseJson(R"("\u00e9\ud83d\ude00\/\n")");
  ASSERT_OUTBOX_OK(v);
  EXPECT_EQ(v->text, "\xC3\xA9\xF0\x9F\x98\x80/\n");
}

TEST(CtlJsonParseTest, RejectsWhatRfc8259Forbids) {
  for (const char* bad :
       {"",         "{",        "[1,]",        "{\"a\":1,}",  "01",
        "1.",       "-",        "1e",          "+1",          "'a'",
        "\"\x01\"", "\"\xFF\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\x\"",
        "{a:1}",    "[1] 2",    "nul",         "\"abc",       "{\"a\" 1}"}) {
    EXPECT_STATUS_CODE(ParseJson(bad), absl::StatusCode::kInvalidArgument)
        << "accepted: " << bad;
  }
}

TEST(CtlJsonParseTest, RefusesNestingDeeperThanTheLimit) {
  EXPECT_OUTBOX_OK(ParseJson(std::string(500, '[') + std::string(500, ']')));
  EXPECT_STATUS_CODE(
      ParseJson(std::string(100000, '[') + std::string(100000, ']')),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace outbox::ctl
