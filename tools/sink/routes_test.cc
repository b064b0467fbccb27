// Copyright (c) edge-outbox authors.

#include "tools/sink/routes.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox::sink {
namespace {

using Json = nlohmann::ordered_json;

RouteTable Table(const std::string& text) {
  absl::StatusOr<RouteTable> table = RouteTable::Parse(text, "routes.json");
  EXPECT_TRUE(table.ok()) << table.status();
  return table.ok() ? *std::move(table) : RouteTable();
}

// The message of the error Parse gives for `text` ("" if it accepts it).
std::string ErrorOf(const std::string& text) {
  absl::StatusOr<RouteTable> table = RouteTable::Parse(text, "routes.json");
  if (table.ok()) return "";
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(table.status().message());
}

constexpr char kShipping[] = R"({"routes": [
  {"route": "POST /ship", "body": {"shipmentId": "S-{counter}"}},
  {"route": "POST /ship/{id}/cancel", "body": {"cancelled": "{path:id}"}},
  {"route": "DELETE /ship/{id}", "status": 204}
]})";

TEST(RouteMatchTest, LiteralPathMatchesItsMethodOnly) {
  RouteTable table = Table(kShipping);
  std::optional<RouteMatch> m = table.Match("POST", "/ship");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->route->name, "POST /ship");
  EXPECT_FALSE(table.Match("GET", "/ship").has_value());
}

TEST(RouteMatchTest, ParameterSegmentIsCaptured) {
  std::optional<RouteMatch> m =
      Table(kShipping).Match("POST", "/ship/SHIP-7/cancel");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->index, 1u);
  EXPECT_EQ(m->params.at("id"), "SHIP-7");
}

TEST(RouteMatchTest, EncodedSlashStaysInsideItsSegment) {
  std::optional<RouteMatch> m =
      Table(kShipping).Match("POST", "/ship/a%2Fb%22%25/cancel");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->params.at("id"), "a/b\"%");
}

TEST(RouteMatchTest, DifferentSegmentCountDoesNotMatch) {
  RouteTable table = Table(kShipping);
  EXPECT_FALSE(table.Match("POST", "/ship/x").has_value());
  EXPECT_FALSE(table.Match("POST", "/ship/").has_value());
  EXPECT_FALSE(table.Match("POST", "/ship/x/cancel/more").has_value());
  EXPECT_FALSE(table.Match("POST", "/other").has_value());
}

TEST(RouteMatchTest, FirstRouteInFileOrderWins) {
  RouteTable table = Table(R"({"routes": [
    {"route": "POST /a/{x}", "status": 201},
    {"route": "POST /a/b", "status": 202}]})");
  EXPECT_EQ(table.Match("POST", "/a/b")->route->status, 201);
}

TEST(RouteTableTest, MethodsListsTheMethodsInUse) {
  EXPECT_EQ(Table(kShipping).Methods(),
            (std::set<std::string>{"DELETE", "POST"}));
}

TEST(RouteTableTest, CommentsAreAllowed) {
  EXPECT_EQ(Table("// c\n{\"routes\": [/* none */]}").routes().size(), 0u);
}

TEST(RouteTableTest, ErrorsNameTheSourceAndTheRoute) {
  const std::string e = ErrorOf(R"({"routes": [{"route": "POST /a"},
      {"route": "POST /b", "status": 99}]})");
  EXPECT_TRUE(absl::StartsWith(e, "routes.json: routes[1]: status:")) << e;
}

TEST(RouteTableTest, RefusesBadFiles) {
  EXPECT_TRUE(absl::StrContains(ErrorOf("{"), "not JSON"));
  EXPECT_TRUE(absl::StrContains(ErrorOf("[]"), "\"routes\""));
  EXPECT_TRUE(
      absl::StrContains(ErrorOf(R"({"routes": [], "x": 1})"), "\"routes\""));
  EXPECT_TRUE(absl::StrContains(
      ErrorOf(R"({"routes": [{"route": "post /a"}]})"), "unknown method"));
  EXPECT_TRUE(absl::StrContains(ErrorOf(R"({"routes": [{"route": "/a"}]})"),
                                "METHOD /path"));
  EXPECT_TRUE(absl::StrContains(
      ErrorOf(R"({"routes": [{"route": "POST /a", "stauts": 200}]})"),
      "unknown member \"stauts\""));
  EXPECT_TRUE(absl::StrContains(
      ErrorOf(R"({"routes": [{"route": "POST /a"}, {"route": "POST /a"}]})"),
      "twice"));
  EXPECT_TRUE(absl::StrContains(
      ErrorOf(R"({"routes": [{"route": "POST /a/x{id}"}]})"), "whole segment"));
  EXPECT_TRUE(absl::StrContains(
      ErrorOf(R"({"routes": [{"route": "POST /a/{id}/{id}"}]})"),
      "{id} twice"));
}

TEST(RouteTableTest, RefusesABodyUsingAParameterThePathLacks) {
  const std::string e =
      ErrorOf(R"({"routes": [{"route": "POST /a/{x}", "body": "{path:y}"}]})");
  EXPECT_TRUE(absl::StrContains(e, "routes[0]: body: {path:y}")) << e;
}

TEST(RouteTableTest, RefusesABadFailRule) {
  EXPECT_TRUE(absl::StrContains(ErrorOf(R"({"routes": [{"route": "POST /a",
                  "fail": {"when": "x", "in": [1], "status": 422}}]})"),
                                "fail.when"));
  EXPECT_TRUE(absl::StrContains(ErrorOf(R"({"routes": [{"route": "POST /a",
                  "fail": {"when": "/x", "in": [], "status": 422}}]})"),
                                "fail.in"));
  EXPECT_TRUE(absl::StrContains(ErrorOf(R"({"routes": [{"route": "POST /a",
                  "fail": {"when": "/x", "in": [1]}}]})"),
                                "fail.status"));
}

TEST(RouteTableTest, LoadNamesAMissingFile) {
  absl::StatusOr<RouteTable> t = RouteTable::Load("/nonexistent/routes.json");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(absl::StrContains(t.status().message(),
                                "routes file /nonexistent/routes.json"))
      << t.status();
}

TEST(AnswerRouteTest, RendersTheBodyAsJson) {
  RouteTable table = Table(kShipping);
  std::optional<RouteMatch> m = table.Match("POST", "/ship/S-3/cancel");
  ASSERT_TRUE(m.has_value());
  RouteAnswer a = AnswerRoute(*m, "", 1, "u");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, R"({"cancelled":"S-3"})");
  EXPECT_EQ(a.content_type, "application/json");
  EXPECT_FALSE(a.error.has_value());
}

TEST(AnswerRouteTest, RouteWithoutBodyAnswersTheStatusAsText) {
  RouteTable table = Table(kShipping);
  RouteAnswer a = AnswerRoute(*table.Match("DELETE", "/ship/S-3"), "", 1, "u");
  EXPECT_EQ(a.status, 204);
  EXPECT_EQ(a.body, "204\n");
}

TEST(AnswerRouteTest, MissingPointerAnswers500WithTheReason) {
  RouteTable table = Table(R"({"routes": [
    {"route": "POST /fraud", "body": {"riskScore": "{request:/riskScore}"}}]})");
  RouteAnswer a =
      AnswerRoute(*table.Match("POST", "/fraud"), R"({"x":1})", 1, "u");
  EXPECT_EQ(a.status, 500);
  ASSERT_TRUE(a.error.has_value());
  EXPECT_TRUE(absl::StrContains(*a.error, "/riskScore")) << *a.error;
  EXPECT_EQ(Json::parse(a.body)["error"], *a.error);
}

TEST(AnswerRouteTest, FailRuleAppliesOnlyToListedValues) {
  RouteTable table = Table(R"({"routes": [{"route": "POST /billing",
    "body": {"ok": true},
    "fail": {"when": "/simulate", "in": ["decline", 3], "status": 422,
             "body": {"error": "declined {request:/simulate}"}}}]})");
  const RouteMatch m = *table.Match("POST", "/billing");
  RouteAnswer declined = AnswerRoute(m, R"({"simulate":"decline"})", 1, "u");
  EXPECT_EQ(declined.status, 422);
  EXPECT_EQ(declined.body, R"({"error":"declined decline"})");
  EXPECT_EQ(AnswerRoute(m, R"({"simulate":3})", 1, "u").status, 422);
  EXPECT_EQ(AnswerRoute(m, R"({"simulate":"3"})", 1, "u").status, 200);
  EXPECT_EQ(AnswerRoute(m, R"({})", 1, "u").status, 200);
  EXPECT_EQ(AnswerRoute(m, "not json", 1, "u").status, 200);
}

}  // namespace
}  // namespace outbox::sink
