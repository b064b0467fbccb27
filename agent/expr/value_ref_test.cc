// Copyright (c) edge-outbox authors.

#include "agent/expr/value_ref.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox::workflow {
namespace {

using Json = nlohmann::json;

std::string Pointer(absl::string_view path) {
  absl::StatusOr<std::string> p = ToJsonPointer(path);
  EXPECT_TRUE(p.ok()) << path << ": " << p.status();
  return p.ok() ? *p : "<error>";
}

TEST(ToJsonPointerTest, KeepsAPointerAsWritten) {
  EXPECT_EQ(Pointer(""), "");
  EXPECT_EQ(Pointer("/a/0/b"), "/a/0/b");
  EXPECT_EQ(Pointer("/a~1b/c~0d"), "/a~1b/c~0d");
}

TEST(ToJsonPointerTest, ConvertsTheDottedForm) {
  EXPECT_EQ(Pointer("$"), "");
  EXPECT_EQ(Pointer("$.riskScore"), "/riskScore");
  EXPECT_EQ(Pointer("$.order.items[0].sku"), "/order/items/0/sku");
  EXPECT_EQ(Pointer("$[12][0]"), "/12/0");
  EXPECT_EQ(Pointer("$.a-b_C9"), "/a-b_C9");
}

TEST(ToJsonPointerTest, RefusesDottedFormsBeyondTheSubset) {
  for (const char* path :
       {"$.", "$..a", "$.a.", "$.*", "$.a[*]", "$.a[]", "$.a[1", "$.a[01]",
        "$.a[-1]", "$['a']", "$.a b", "$a", "$.a[?(@.x)]", "$.caf\xc3\xa9"}) {
    EXPECT_STATUS_CODE(ToJsonPointer(path), absl::StatusCode::kInvalidArgument)
        << path;
  }
}

TEST(ToJsonPointerTest, RefusesAMalformedPointer) {
  for (const char* path : {"a/b", "/a~2", "/a~", "riskScore"}) {
    EXPECT_STATUS_CODE(ToJsonPointer(path), absl::StatusCode::kInvalidArgument)
        << path;
  }
}

TEST(ParseValueRefTest, ReadsARequestReference) {
  absl::StatusOr<ValueRef> ref = ParseValueRef("request:$.customerId");
  ASSERT_OUTBOX_OK(ref);
  EXPECT_EQ(ref->source, ValueRef::Source::kRequest);
  EXPECT_EQ(ref->step, "");
  EXPECT_EQ(ref->pointer, "/customerId");
  EXPECT_EQ(ref->text, "request:$.customerId");
}

TEST(ParseValueRefTest, ReadsAResponseReferenceWithItsStep) {
  absl::StatusOr<ValueRef> ref =
      ParseValueRef("response:fraudCheck:/riskScore");
  ASSERT_OUTBOX_OK(ref);
  EXPECT_EQ(ref->source, ValueRef::Source::kResponse);
  EXPECT_EQ(ref->step, "fraudCheck");
  EXPECT_EQ(ref->pointer, "/riskScore");
}

TEST(ParseValueRefTest, APathRightAfterResponseIsTheStepsOwnAnswer) {
  for (const char* text :
       {"response:$.reservationId", "response:/reservationId"}) {
    absl::StatusOr<ValueRef> ref = ParseValueRef(text);
    ASSERT_OUTBOX_OK(ref);
    EXPECT_EQ(ref->source, ValueRef::Source::kResponse);
    EXPECT_EQ(ref->step, "");  // bound to the step by the configuration
    EXPECT_EQ(ref->pointer, "/reservationId");
  }
}

TEST(ParseValueRefTest, RefusesAResponseWithoutAStepOrPath) {
  EXPECT_STATUS_CODE(ParseValueRef("response:reservationId"),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(ParseValueRef("response::/a"),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(ParseValueRef("response:"),
                     absl::StatusCode::kInvalidArgument);
}

TEST(IsValueNameTest, LettersDigitsAndUnderscoreNotLeadingADigit) {
  EXPECT_TRUE(IsValueName("shipmentId"));
  EXPECT_TRUE(IsValueName("_a1"));
  EXPECT_FALSE(IsValueName("1a"));
  EXPECT_FALSE(IsValueName(""));
  EXPECT_FALSE(IsValueName("a-b"));
  EXPECT_FALSE(IsValueName("\"a\":1"));
  EXPECT_FALSE(IsValueName(std::string(65, 'a')));
}

TEST(ParseValueRefTest, RefusesAnUnknownSourceOrABadPath) {
  EXPECT_STATUS_CODE(ParseValueRef("$.a"), absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(ParseValueRef("header:/a"),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(ParseValueRef("request:a.b"),
                     absl::StatusCode::kInvalidArgument);
}

ValueRef Ref(absl::string_view text) {
  absl::StatusOr<ValueRef> ref = ParseValueRef(text);
  EXPECT_TRUE(ref.ok()) << ref.status();
  return ref.ok() ? *ref : ValueRef();
}

TEST(ValueResolverTest, ResolvesRequestAndResponseValues) {
  ValueResolver r(R"({"customerId":"C-123","items":[{"sku":"A"}]})");
  r.AddResponse("fraudCheck", R"({"riskScore":25})");
  absl::StatusOr<Json> customer = r.Resolve(Ref("request:/customerId"));
  ASSERT_OUTBOX_OK(customer);
  EXPECT_EQ(*customer, "C-123");
  absl::StatusOr<Json> sku = r.Resolve(Ref("request:$.items[0].sku"));
  ASSERT_OUTBOX_OK(sku);
  EXPECT_EQ(*sku, "A");
  absl::StatusOr<Json> score = r.Resolve(Ref("response:fraudCheck:/riskScore"));
  ASSERT_OUTBOX_OK(score);
  EXPECT_EQ(*score, 25);
}

TEST(ValueResolverTest, TheEmptyPathIsTheWholeDocument) {
  ValueResolver r(R"([1,2])");
  absl::StatusOr<Json> all = r.Resolve(Ref("request:"));
  ASSERT_OUTBOX_OK(all);
  EXPECT_EQ(*all, Json::parse("[1,2]"));
}

TEST(ValueResolverTest, AMissingPathIsNotFound) {
  ValueResolver r(R"({"a":{"b":1},"list":[0]})");
  for (const char* ref :
       {"request:/nope", "request:/a/c", "request:/list/1", "request:/list/x",
        "request:/list/-", "request:/a/b/c"}) {
    EXPECT_STATUS_CODE(r.Resolve(Ref(ref)), absl::StatusCode::kNotFound) << ref;
  }
}

TEST(ValueResolverTest, AStepWithoutAResponseIsNotFound) {
  ValueResolver r("{}");
  EXPECT_STATUS_CODE(r.Resolve(Ref("response:shipping:/id")),
                     absl::StatusCode::kNotFound);
}

TEST(ValueResolverTest, ABodyThatIsNotJsonIsInvalidArgument) {
  ValueResolver r("total=12.50");
  r.AddResponse("inventory", "<html>502</html>");
  EXPECT_STATUS_CODE(r.Resolve(Ref("request:/total")),
                     absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Json> v = r.Resolve(Ref("response:inventory:/id"));
  EXPECT_STATUS_CODE(v, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.status().message().find("502"), absl::string_view::npos)
      << "the message must not quote the body: " << v.status();
}

TEST(ValueResolverTest, ACutAnswerSaysItWasCutAndWhere) {
  ValueResolver r("{}");
  r.AddResponse("shipping", R"({"shipmentId": "SHIP-1", "lab)", /*cut=*/true);
  absl::StatusOr<Json> v = r.Resolve(Ref("response:shipping:/shipmentId"));
  EXPECT_STATUS_CODE(v, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.status().message(),
            "response:shipping:/shipmentId: the response of step \"shipping\" "
            "was cut at 29 bytes (agent.workflow_response_bytes) and is no "
            "longer JSON");
}

TEST(ValueResolverTest, ALaterResponseReplacesAnEarlierOne) {
  ValueResolver r("{}");
  r.AddResponse("s", "not json");
  r.AddResponse("s", R"({"id":7})");
  absl::StatusOr<Json> id = r.Resolve(Ref("response:s:/id"));
  ASSERT_OUTBOX_OK(id);
  EXPECT_EQ(*id, 7);
}

}  // namespace
}  // namespace outbox::workflow
