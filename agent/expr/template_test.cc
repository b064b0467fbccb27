// Copyright (c) edge-outbox authors.

#include "agent/expr/template.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/status.h"

namespace outbox::workflow {
namespace {

using Json = nlohmann::json;
using Kind = Template::Kind;

// Seed 003's shipping step: its request and its response.
ValueResolver Shipping(const char* response) {
  ValueResolver r(R"({"customerId":"C-123","shippingType":"domestic"})");
  r.AddResponse("shipping", response);
  return r;
}

absl::StatusOr<std::string> FillText(absl::string_view text, Kind kind,
                                     ValueResolver r) {
  absl::StatusOr<Template> tmpl = ParseTemplate(text, kind);
  if (!tmpl.ok()) return tmpl.status();
  return Fill(*tmpl, r);
}

TEST(PercentEncodeTest, KeepsExactlyTheUnreservedBytes) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    absl::StatusOr<std::string> out = PercentEncode(std::string(1, c));
    ASSERT_OUTBOX_OK(out) << b;
    const bool unreserved = (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') ||
                            (b >= '0' && b <= '9') || b == '-' || b == '.' ||
                            b == '_' || b == '~';
    static constexpr char kHex[] = "0123456789ABCDEF";
    const std::string expected =
        unreserved ? std::string(1, c)
                   : absl::StrCat("%", std::string(1, kHex[b >> 4]),
                                  std::string(1, kHex[b & 15]));
    EXPECT_EQ(*out, expected) << "byte " << b;
  }
}

TEST(PercentEncodeTest, EncodesEmbeddedNulAndTheEmptyString) {
  absl::StatusOr<std::string> nul = PercentEncode(std::string("a\0b", 3));
  ASSERT_OUTBOX_OK(nul);
  EXPECT_EQ(*nul, "a%00b");
  // An empty view into a longer buffer: curl must not read past it.
  absl::StatusOr<std::string> empty =
      PercentEncode(absl::string_view("abc", 0));
  ASSERT_OUTBOX_OK(empty);
  EXPECT_EQ(*empty, "");
}

TEST(TemplateTest, FillsAUrlFromAResponse) {
  absl::StatusOr<std::string> url = FillText(
      "http://localhost:9000/api/domestic-shipping/"
      "{{response:shipping:$.shipmentId}}/cancel",
      Kind::kUrl, Shipping(R"({"shipmentId":"SHIP-789"})"));
  ASSERT_OUTBOX_OK(url);
  EXPECT_EQ(*url,
            "http://localhost:9000/api/domestic-shipping/SHIP-789/cancel");
}

TEST(TemplateTest, PercentEncodesUrlValues) {
  absl::StatusOr<std::string> url =
      FillText("https://x/{{response:shipping:/id}}?c={{request:/customerId}}",
               Kind::kUrl, Shipping(R"({"id":"a\"/b%c?d#e f\u00e9"})"));
  ASSERT_OUTBOX_OK(url);
  EXPECT_EQ(*url, "https://x/a%22%2Fb%25c%3Fd%23e%20f%C3%A9?c=C-123");
}

TEST(TemplateTest, UrlTakesNumbersAndBooleansAsTheirJsonText) {
  absl::StatusOr<std::string> url =
      FillText("/{{response:shipping:/n}}/{{response:shipping:/b}}", Kind::kUrl,
               Shipping(R"({"n":-12.5,"b":true})"));
  ASSERT_OUTBOX_OK(url);
  EXPECT_EQ(*url, "/-12.5/true");
}

TEST(TemplateTest, UrlRefusesNullArraysAndObjects) {
  for (const char* body :
       {R"({"v":null})", R"({"v":[1]})", R"({"v":{"a":1}})"}) {
    EXPECT_STATUS_CODE(
        FillText("/{{response:shipping:/v}}", Kind::kUrl, Shipping(body)),
        absl::StatusCode::kFailedPrecondition)
        << body;
  }
}

TEST(TemplateTest, FillsAPayloadWithJsonValues) {
  absl::StatusOr<std::string> payload = FillText(
      R"({"reason":"payment_failed","shipmentId":{{response:shipping:/shipmentId}},)"
      R"("customerId":{{request:$.customerId}},"lines":{{response:shipping:/lines}}})",
      Kind::kPayload,
      Shipping(R"({"shipmentId":"SHIP-789","lines":[1,{"a":null}]})"));
  ASSERT_OUTBOX_OK(payload);
  EXPECT_EQ(Json::parse(*payload),
            Json::parse(R"({"reason":"payment_failed","shipmentId":"SHIP-789",)"
                        R"("customerId":"C-123","lines":[1,{"a":null}]})"));
}

TEST(TemplateTest, EscapesPayloadStrings) {
  const std::string nasty = "q\"uote /slash %pct \\ caf\xc3\xa9 \n\x01";
  const std::string body = Json{{"id", nasty}}.dump();
  absl::StatusOr<std::string> payload =
      FillText(R"({"id":{{response:shipping:/id}},"x":1})", Kind::kPayload,
               Shipping(body.c_str()));
  ASSERT_OUTBOX_OK(payload);
  const Json parsed = Json::parse(*payload, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << *payload;
  EXPECT_EQ(parsed, Json::parse(absl::StrCat(R"({"x":1,"id":)",
                                             Json(nasty).dump(), "}")));
}

TEST(TemplateTest, InsideAStringPutsStringsEscapedWithoutTheirQuotes) {
  absl::StatusOr<std::string> payload = FillText(
      R"({"shipmentId":"{{response:shipping:/id}}","order":"ORD-{{request:/n}}"})",
      Kind::kPayload, [] {
        ValueResolver r(R"({"n":"7"})");
        r.AddResponse("shipping", R"({"id":"S\"1\\\n"})");
        return r;
      }());
  ASSERT_OUTBOX_OK(payload);
  EXPECT_EQ(*payload, R"({"shipmentId":"S\"1\\\n","order":"ORD-7"})");
  EXPECT_EQ(Json::parse(*payload)["shipmentId"], "S\"1\\\n");
}

TEST(TemplateTest, InsideAStringPutsNumbersAndBooleansAsTheirJsonText) {
  absl::StatusOr<std::string> payload = FillText(
      R"({"a":"n={{response:shipping:/n}} b={{response:shipping:/b}}"})",
      Kind::kPayload, Shipping(R"({"n":-1.5,"b":false})"));
  ASSERT_OUTBOX_OK(payload);
  EXPECT_EQ(*payload, R"({"a":"n=-1.5 b=false"})");
}

TEST(TemplateTest, InsideAStringRefusesNullArraysAndObjects) {
  for (const char* body :
       {R"({"v":null})", R"({"v":[1]})", R"({"v":{"secret":"s3cr3t"}})"}) {
    absl::StatusOr<std::string> payload = FillText(
        R"({"a":"x{{response:shipping:/v}}"})", Kind::kPayload, Shipping(body));
    EXPECT_STATUS_CODE(payload, absl::StatusCode::kFailedPrecondition) << body;
    EXPECT_NE(payload.status().message().find("{{response:shipping:/v}}"),
              std::string::npos);
    EXPECT_EQ(payload.status().message().find("s3cr3t"), std::string::npos);
  }
}

TEST(TemplateTest, AWholeValuePlaceholderStillTakesAnyValue) {
  absl::StatusOr<std::string> payload = FillText(
      R"({"a":{{response:shipping:/v}},"s":"{{request:/customerId}}"})",
      Kind::kPayload, Shipping(R"({"v":{"k":[null]}})"));
  ASSERT_OUTBOX_OK(payload);
  EXPECT_EQ(*payload, R"({"a":{"k":[null]},"s":"C-123"})");
}

TEST(TemplateTest, AMissingValueFailsTheFillInsteadOfLeavingItEmpty) {
  EXPECT_STATUS_CODE(
      FillText("/{{response:shipping:/nope}}", Kind::kUrl, Shipping("{}")),
      absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(
      FillText("[{{response:billing:/id}}]", Kind::kPayload, Shipping("{}")),
      absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(
      FillText("/{{response:shipping:/id}}", Kind::kUrl, Shipping("<html>")),
      absl::StatusCode::kFailedPrecondition);
}

TEST(TemplateTest, TextWithoutPlaceholdersIsKept) {
  absl::StatusOr<std::string> url =
      FillText("https://x/a b}}", Kind::kUrl, Shipping("{}"));
  ASSERT_OUTBOX_OK(url);
  EXPECT_EQ(*url, "https://x/a b}}");
}

TEST(ParseTemplateTest, RefusesAnUnclosedPlaceholder) {
  EXPECT_STATUS_CODE(ParseTemplate("/{{request:/a", Kind::kUrl),
                     absl::StatusCode::kInvalidArgument);
}

TEST(ParseTemplateTest, RefusesABadReference) {
  EXPECT_STATUS_CODE(ParseTemplate("/{{shipmentId}}", Kind::kUrl),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(ParseTemplate("/{{response:id}}", Kind::kUrl),
                     absl::StatusCode::kInvalidArgument);
}

// Seed 003's revert: {name} reads the reference its extract names.
TEST(NamedTemplateTest, FillsNamesInUrlsAndInsideStrings) {
  NamedValues names;
  names["shipmentId"] = *ParseValueRef("response:shipping:/id");
  names["customerId"] = *ParseValueRef("request:/customerId");
  ValueResolver r = Shipping(R"({"id":"SHIP 7"})");
  absl::StatusOr<Template> url =
      ParseTemplate("https://x/{shipmentId}/cancel", Kind::kUrl, names);
  ASSERT_OUTBOX_OK(url);
  EXPECT_EQ(*Fill(*url, r), "https://x/SHIP%207/cancel");
  absl::StatusOr<Template> payload = ParseTemplate(
      R"({"reason": "payment_failed", "shipmentId": "{shipmentId}",)"
      R"( "customer": {customerId}, "o": {"n": 1}})",
      Kind::kPayload, names);
  ASSERT_OUTBOX_OK(payload);
  EXPECT_EQ(*Fill(*payload, r),
            R"({"reason": "payment_failed", "shipmentId": "SHIP 7",)"
            R"( "customer": "C-123", "o": {"n": 1}})");
}

TEST(NamedTemplateTest, AnUndeclaredNameIsRefusedByName) {
  absl::StatusOr<Template> t = ParseTemplate("/{shipmentId}", Kind::kUrl);
  EXPECT_STATUS_CODE(t, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message().find("{shipmentId} is not declared"), 0u)
      << t.status();
}

TEST(NamedTemplateTest, AFailedFillNamesTheNameNotTheValue) {
  NamedValues names;
  names["v"] = *ParseValueRef("response:shipping:/v");
  absl::StatusOr<Template> t =
      ParseTemplate(R"({"a": "x{v}"})", Kind::kPayload, names);
  ASSERT_OUTBOX_OK(t);
  ValueResolver r = Shipping(R"({"v": {"secret": "s3cr3t"}})");
  absl::StatusOr<std::string> filled = Fill(*t, r);
  EXPECT_STATUS_CODE(filled, absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(filled.status().message().find("{v}: the value is object"), 0u)
      << filled.status();
}

TEST(ParseTemplateTest, RefusesAPayloadThatWouldNotBeJson) {
  for (const char* text : {
           R"({"id":"a\{{request:/id}}"})",  // a backslash escapes it
           R"({ {{request:/k}}: 1})",        // where a key goes
           R"([1{{request:/id}}])",          // glued to a number
           R"([{{request:/a}}{{request:/b}}])",
           R"({"id":{{request:/id}})",  // not JSON itself
           "",
       }) {
    EXPECT_STATUS_CODE(ParseTemplate(text, Kind::kPayload),
                       absl::StatusCode::kInvalidArgument)
        << text;
  }
}

TEST(ParseTemplateTest, AcceptsPlaceholdersWhereValuesGo) {
  for (const char* text :
       {R"({"a":{{request:/a}},"b":[{{request:/b}}, 2]})", "{{request:}}",
        R"( [ {{request:/a}} ] )", R"({"id":"{{request:/id}}"})",
        R"(["\"{{request:/a}}\\", "{ {{request:/b}} }"])"}) {
    EXPECT_OUTBOX_OK(ParseTemplate(text, Kind::kPayload)) << text;
  }
}

TEST(ParseTemplateTest, ListsItsReferencesInOrder) {
  absl::StatusOr<Template> tmpl = ParseTemplate(
      "/{{response:a:/x}}/{{request:/y}}/{{response:b:/z}}", Kind::kUrl);
  ASSERT_OUTBOX_OK(tmpl);
  std::vector<std::string> texts;
  for (const ValueRef* ref : References(*tmpl)) texts.push_back(ref->text);
  EXPECT_EQ(texts, (std::vector<std::string>{"response:a:/x", "request:/y",
                                             "response:b:/z"}));
}

}  // namespace
}  // namespace outbox::workflow
