// Copyright (c) edge-outbox authors.

#include "agent/expr/condition.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox::workflow {
namespace {

using Json = nlohmann::json;

std::optional<Json> V(const char* json) { return Json::parse(json); }
const std::optional<Json> kMissing = std::nullopt;
Json X(const char* json) { return Json::parse(json); }

TEST(OperatorTest, ParsesEveryNameAndPrintsItBack) {
  for (const char* name :
       {"eq", "ne", "gt", "gte", "lt", "lte", "contains", "exists"}) {
    absl::StatusOr<Operator> op = ParseOperator(name);
    ASSERT_OUTBOX_OK(op) << name;
    EXPECT_EQ(OperatorName(*op), name);
  }
}

TEST(OperatorTest, RefusesAnUnknownName) {
  for (const char* name : {"", "==", "EQ", "equals", "gte "}) {
    EXPECT_STATUS_CODE(ParseOperator(name), absl::StatusCode::kInvalidArgument)
        << name;
  }
}

TEST(CompareTest, ExistsIsTrueForEveryPresentValueAndFalseForAMissingOne) {
  for (const char* v : {"0", "\"\"", "false", "null", "[]", "{}"}) {
    EXPECT_TRUE(Compare(Operator::kExists, V(v), Json())) << v;
  }
  EXPECT_FALSE(Compare(Operator::kExists, kMissing, Json()));
}

TEST(CompareTest, EveryOtherOperatorIsFalseForAMissingValue) {
  for (Operator op :
       {Operator::kEq, Operator::kNe, Operator::kGt, Operator::kGte,
        Operator::kLt, Operator::kLte, Operator::kContains}) {
    EXPECT_FALSE(Compare(op, kMissing, X("1"))) << OperatorName(op);
    EXPECT_FALSE(Compare(op, kMissing, X("null"))) << OperatorName(op);
  }
}

TEST(CompareTest, EqComparesNumbersAsNumbers) {
  EXPECT_TRUE(Compare(Operator::kEq, V("25"), X("25")));
  EXPECT_TRUE(Compare(Operator::kEq, V("1"), X("1.0")));
  EXPECT_TRUE(Compare(Operator::kEq, V("-0.0"), X("0")));
  EXPECT_FALSE(Compare(Operator::kEq, V("25"), X("26")));
  // Integers exactly: 2^53 + 1 is not 2^53, and 2^64-1 is not -1.
  EXPECT_FALSE(
      Compare(Operator::kEq, V("9007199254740993"), X("9007199254740992")));
  EXPECT_FALSE(Compare(Operator::kEq, V("18446744073709551615"), X("-1")));
  EXPECT_TRUE(Compare(Operator::kEq, V("18446744073709551615"),
                      X("18446744073709551615")));
}

TEST(CompareTest, EqComparesStringsBoolsNullsAndStructuresExactly) {
  EXPECT_TRUE(Compare(Operator::kEq, V("\"domestic\""), X("\"domestic\"")));
  EXPECT_FALSE(Compare(Operator::kEq, V("\"domestic\""), X("\"Domestic\"")));
  EXPECT_TRUE(Compare(Operator::kEq, V("true"), X("true")));
  EXPECT_FALSE(Compare(Operator::kEq, V("true"), X("false")));
  EXPECT_TRUE(Compare(Operator::kEq, V("null"), X("null")));
  EXPECT_TRUE(Compare(Operator::kEq, V("[1,{\"a\":2}]"), X("[1.0,{\"a\":2}]")));
  EXPECT_FALSE(Compare(Operator::kEq, V("[1,2]"), X("[2,1]")));
  EXPECT_TRUE(
      Compare(Operator::kEq, V("{\"a\":1,\"b\":2}"), X("{\"b\":2,\"a\":1}")));
  EXPECT_FALSE(Compare(Operator::kEq, V("{\"a\":1}"), X("{\"a\":1,\"b\":2}")));
}

TEST(CompareTest, EqIsFalseAcrossTypes) {
  EXPECT_FALSE(Compare(Operator::kEq, V("50"), X("\"50\"")));
  EXPECT_FALSE(Compare(Operator::kEq, V("1"), X("true")));
  EXPECT_FALSE(Compare(Operator::kEq, V("0"), X("null")));
  EXPECT_FALSE(Compare(Operator::kEq, V("\"\""), X("null")));
  EXPECT_FALSE(Compare(Operator::kEq, V("[]"), X("{}")));
}

TEST(CompareTest, NeIsTheNegationOfEqForAPresentValue) {
  EXPECT_FALSE(Compare(Operator::kNe, V("1"), X("1.0")));
  EXPECT_TRUE(Compare(Operator::kNe, V("\"a\""), X("\"b\"")));
  EXPECT_TRUE(Compare(Operator::kNe, V("50"), X("\"50\"")));
  EXPECT_FALSE(Compare(Operator::kNe, V("null"), X("null")));
}

TEST(CompareTest, OrderingOperatorsCompareNumbersNumerically) {
  EXPECT_TRUE(Compare(Operator::kLt, V("25"), X("50")));
  EXPECT_FALSE(Compare(Operator::kLt, V("50"), X("50")));
  EXPECT_TRUE(Compare(Operator::kLte, V("50"), X("50")));
  EXPECT_TRUE(Compare(Operator::kGte, V("75"), X("50")));
  EXPECT_TRUE(Compare(Operator::kGte, V("50.0"), X("50")));
  EXPECT_FALSE(Compare(Operator::kGt, V("50"), X("50")));
  EXPECT_TRUE(Compare(Operator::kGt, V("50.5"), X("50")));
  EXPECT_TRUE(Compare(Operator::kLt, V("-3"), X("2.5")));
  // 9 is less than 10 as a number, though "9" > "10" as text.
  EXPECT_TRUE(Compare(Operator::kLt, V("9"), X("10")));
  EXPECT_TRUE(
      Compare(Operator::kGt, V("9007199254740993"), X("9007199254740992")));
  EXPECT_TRUE(Compare(Operator::kGt, V("18446744073709551615"),
                      X("9223372036854775807")));
  EXPECT_TRUE(Compare(Operator::kLt, V("-9223372036854775808"),
                      X("18446744073709551615")));
}

TEST(CompareTest, OrderingOperatorsCompareStringsByteWise) {
  EXPECT_TRUE(Compare(Operator::kLt, V("\"apple\""), X("\"banana\"")));
  EXPECT_TRUE(Compare(Operator::kGt, V("\"9\""), X("\"10\"")));
  EXPECT_TRUE(Compare(Operator::kGte, V("\"b\""), X("\"b\"")));
  EXPECT_TRUE(Compare(Operator::kLte, V("\"B\""), X("\"a\"")));
  EXPECT_FALSE(Compare(Operator::kLt, V("\"b\""), X("\"a\"")));
}

TEST(CompareTest, OrderingOperatorsAreFalseForOtherTypesOrAMismatch) {
  for (Operator op :
       {Operator::kGt, Operator::kGte, Operator::kLt, Operator::kLte}) {
    EXPECT_FALSE(Compare(op, V("25"), X("\"50\""))) << OperatorName(op);
    EXPECT_FALSE(Compare(op, V("\"25\""), X("50"))) << OperatorName(op);
    EXPECT_FALSE(Compare(op, V("true"), X("false"))) << OperatorName(op);
    EXPECT_FALSE(Compare(op, V("null"), X("null"))) << OperatorName(op);
    EXPECT_FALSE(Compare(op, V("[1]"), X("[1]"))) << OperatorName(op);
    EXPECT_FALSE(Compare(op, V("{}"), X("{}"))) << OperatorName(op);
  }
}

TEST(CompareTest, ContainsFindsASubstring) {
  EXPECT_TRUE(Compare(Operator::kContains, V("\"express-domestic\""),
                      X("\"domestic\"")));
  EXPECT_TRUE(Compare(Operator::kContains, V("\"abc\""), X("\"\"")));
  EXPECT_FALSE(Compare(Operator::kContains, V("\"abc\""), X("\"abcd\"")));
  EXPECT_FALSE(Compare(Operator::kContains, V("\"a50\""), X("50")));
}

TEST(CompareTest, ContainsFindsAnArrayElement) {
  EXPECT_TRUE(Compare(Operator::kContains, V("[\"gift\",\"fragile\"]"),
                      X("\"fragile\"")));
  EXPECT_TRUE(Compare(Operator::kContains, V("[1,2,3]"), X("2.0")));
  EXPECT_TRUE(
      Compare(Operator::kContains, V("[[1],{\"a\":1}]"), X("{\"a\":1}")));
  EXPECT_FALSE(Compare(Operator::kContains, V("[\"fragile\"]"), X("\"frag\"")));
  EXPECT_FALSE(Compare(Operator::kContains, V("[]"), X("null")));
}

TEST(CompareTest, ContainsIsFalseForOtherTypes) {
  EXPECT_FALSE(Compare(Operator::kContains, V("{\"a\":1}"), X("\"a\"")));
  EXPECT_FALSE(Compare(Operator::kContains, V("123"), X("2")));
  EXPECT_FALSE(Compare(Operator::kContains, V("true"), X("true")));
  EXPECT_FALSE(Compare(Operator::kContains, V("null"), X("null")));
}

Condition Cond(const char* ref, Operator op, const char* expected) {
  Condition c;
  absl::StatusOr<ValueRef> parsed = ParseValueRef(ref);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (parsed.ok()) c.ref = *parsed;
  c.op = op;
  c.expected = Json::parse(expected);
  return c;
}

TEST(EvaluateTest, ReadsTheValueTheReferenceNames) {
  ValueResolver r(R"({"shippingType":"domestic"})");
  r.AddResponse("fraudCheck", R"({"riskScore":25})");
  absl::StatusOr<bool> domestic = Evaluate(
      Cond("request:$.shippingType", Operator::kEq, "\"domestic\""), r);
  ASSERT_OUTBOX_OK(domestic);
  EXPECT_TRUE(*domestic);
  absl::StatusOr<bool> risky =
      Evaluate(Cond("response:fraudCheck:/riskScore", Operator::kGte, "50"), r);
  ASSERT_OUTBOX_OK(risky);
  EXPECT_FALSE(*risky);
}

TEST(EvaluateTest, AMissingValueIsAResultNotAnError) {
  ValueResolver r("{}");
  absl::StatusOr<bool> eq = Evaluate(Cond("request:/a", Operator::kEq, "1"), r);
  ASSERT_OUTBOX_OK(eq);
  EXPECT_FALSE(*eq);
  absl::StatusOr<bool> skipped_step =
      Evaluate(Cond("response:fraud:/score", Operator::kExists, "null"), r);
  ASSERT_OUTBOX_OK(skipped_step);
  EXPECT_FALSE(*skipped_step);
}

TEST(EvaluateTest, ADocumentThatIsNotJsonIsAnError) {
  ValueResolver r("not json");
  EXPECT_STATUS_CODE(Evaluate(Cond("request:/a", Operator::kExists, "null"), r),
                     absl::StatusCode::kInvalidArgument);
}

std::vector<Choice> Billing() {
  return {
      {"billing",
       {Cond("response:fraudCheck:/riskScore", Operator::kLt, "50")}},
      {"highValue",
       {Cond("response:fraudCheck:/riskScore", Operator::kGte, "50")}},
  };
}

std::optional<size_t> Choose(const std::vector<Choice>& choices,
                             const char* fraud_response) {
  ValueResolver r("{}");
  if (fraud_response != nullptr) r.AddResponse("fraudCheck", fraud_response);
  absl::StatusOr<std::optional<size_t>> chosen = ChooseDestination(choices, r);
  EXPECT_TRUE(chosen.ok()) << chosen.status();
  return chosen.ok() ? *chosen : std::optional<size_t>(99);
}

TEST(ChooseDestinationTest, TakesTheFirstChoiceWhoseConditionsHold) {
  EXPECT_EQ(Choose(Billing(), R"({"riskScore":25})"), 0u);
  EXPECT_EQ(Choose(Billing(), R"({"riskScore":75})"), 1u);
  std::vector<Choice> overlapping = Billing();
  overlapping[1].conditions[0].op = Operator::kExists;
  EXPECT_EQ(Choose(overlapping, R"({"riskScore":25})"), 0u);
}

TEST(ChooseDestinationTest, ConditionsOfAChoiceAreAnAnd) {
  std::vector<Choice> choices = {
      {"mid",
       {Cond("response:fraudCheck:/riskScore", Operator::kGte, "20"),
        Cond("response:fraudCheck:/riskScore", Operator::kLt, "30")}}};
  EXPECT_EQ(Choose(choices, R"({"riskScore":25})"), 0u);
  EXPECT_EQ(Choose(choices, R"({"riskScore":35})"), std::nullopt);
  EXPECT_EQ(Choose(choices, R"({"riskScore":15})"), std::nullopt);
}

TEST(ChooseDestinationTest, NoMatchingChoiceSkipsTheStep) {
  EXPECT_EQ(Choose(Billing(), R"({"riskScore":"25"})"), std::nullopt);
  EXPECT_EQ(Choose(Billing(), nullptr), std::nullopt);
  EXPECT_EQ(Choose({}, R"({"riskScore":25})"), std::nullopt);
}

TEST(ChooseDestinationTest, AChoiceWithoutConditionsAlwaysHolds) {
  std::vector<Choice> choices = Billing();
  choices.push_back({"fallback", {}});
  EXPECT_EQ(Choose(choices, nullptr), 2u);
}

TEST(ChooseDestinationTest, ADocumentThatIsNotJsonFailsTheChoice) {
  ValueResolver r("{}");
  r.AddResponse("fraudCheck", "<html>");
  EXPECT_STATUS_CODE(ChooseDestination(Billing(), r),
                     absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace outbox::workflow
