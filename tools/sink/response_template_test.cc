// Copyright (c) edge-outbox authors.

#include "tools/sink/response_template.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox::sink {
namespace {

using Json = nlohmann::ordered_json;

class RenderTest : public ::testing::Test {
 protected:
  // Renders `tmpl` (JSON text) against request body `request` (JSON text).
  absl::StatusOr<Json> Render(const std::string& tmpl,
                              const std::string& request = "{}") {
    request_ = Json::parse(request);
    TemplateInputs in;
    in.request = &request_;
    in.path_params = &params_;
    in.counter = 7;
    in.uuid = "0b7e5d9c-1f2a-4c3b-8d4e-5f6a7b8c9d0e";
    return RenderTemplate(Json::parse(tmpl), in);
  }

  Json request_;
  PathParams params_ = {{"id", "RES-9"}};
};

TEST_F(RenderTest, WholeStringPlaceholderKeepsTheValuesType) {
  absl::StatusOr<Json> out =
      Render(R"({"riskScore": "{request:/score}"})", R"({"score": 75})");
  ASSERT_OUTBOX_OK(out);
  EXPECT_EQ(out->dump(), R"({"riskScore":75})");
}

TEST_F(RenderTest, PlaceholderInsideTextInsertsTheText) {
  absl::StatusOr<Json> out = Render(
      R"({"a": "RES-{counter}", "b": "id {path:id}", "c": "n={request:/n}"})",
      R"({"n": [1, 2]})");
  ASSERT_OUTBOX_OK(out);
  EXPECT_EQ(out->dump(), R"({"a":"RES-7","b":"id RES-9","c":"n=[1,2]"})");
}

TEST_F(RenderTest, UuidIsTheSameEverywhereInOneBody) {
  absl::StatusOr<Json> out = Render(R"(["{uuid}", {"x": "{uuid}"}])");
  ASSERT_OUTBOX_OK(out);
  EXPECT_EQ(out->dump(), R"(["0b7e5d9c-1f2a-4c3b-8d4e-5f6a7b8c9d0e",)"
                         R"({"x":"0b7e5d9c-1f2a-4c3b-8d4e-5f6a7b8c9d0e"}])");
}

TEST_F(RenderTest, QuotesAndControlCharactersInValuesStayInsideTheString) {
  const std::string nasty = R"({"v": "a\"},\"x\":\"b\\\n\t\u0001"})";
  absl::StatusOr<Json> out =
      Render(R"({"whole": "{request:/v}", "part": "[{request:/v}]"})", nasty);
  ASSERT_OUTBOX_OK(out);
  const std::string dumped = out->dump();
  // The body is still one object with exactly two members...
  const Json reparsed = Json::parse(dumped);
  ASSERT_EQ(reparsed.size(), 2u) << dumped;
  // ...holding the value byte for byte.
  const std::string value = "a\"},\"x\":\"b\\\n\t\x01";
  EXPECT_EQ(reparsed["whole"], value);
  EXPECT_EQ(reparsed["part"], "[" + value + "]");
}

TEST_F(RenderTest, PathParameterWithQuotesIsInsertedAsAString) {
  params_["id"] = "R\"1\n";
  absl::StatusOr<Json> out = Render(R"({"id": "{path:id}"})");
  ASSERT_OUTBOX_OK(out);
  EXPECT_EQ(Json::parse(out->dump())["id"], "R\"1\n");
}

TEST_F(RenderTest, MissingPointerIsAnErrorNamingThePointer) {
  absl::StatusOr<Json> out =
      Render(R"({"riskScore": "{request:/riskScore}"})", R"({"score": 1})");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(out.status().message(), "/riskScore"))
      << out.status();
}

TEST_F(RenderTest, PointerThroughAnArrayWithAWordIsAnError) {
  absl::StatusOr<Json> out = Render(R"("{request:/a/b}")", R"({"a": [1]})");
  EXPECT_FALSE(out.ok());
}

TEST_F(RenderTest, RequestThatIsNotJsonIsAnError) {
  TemplateInputs in;
  in.path_params = &params_;
  absl::StatusOr<Json> out = RenderTemplate(Json("{request:/a}"), in);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "not JSON"));
}

TEST(CheckTemplateTest, AcceptsEveryKnownPlaceholder) {
  EXPECT_OUTBOX_OK(
      CheckTemplate(Json::parse(R"({"a": ["{uuid}", "{counter}", "x{path:id}",
                           "{request:/a~1b/0}"], "n": 3})"),
                    {{"id", ""}}));
}

TEST(CheckTemplateTest, RefusesAnUnknownPlaceholder) {
  absl::Status s = CheckTemplate(Json("{reqest:/a}"), {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "{reqest:/a}")) << s;
}

TEST(CheckTemplateTest, RefusesAPointerWithoutLeadingSlash) {
  absl::Status s = CheckTemplate(Json("{request:riskScore}"), {});
  EXPECT_TRUE(absl::StrContains(s.message(), "not a JSON pointer")) << s;
}

TEST(CheckTemplateTest, RefusesAPathParameterTheRouteLacks) {
  absl::Status s = CheckTemplate(Json("{path:id}"), {{"shipmentId", ""}});
  EXPECT_TRUE(absl::StrContains(s.message(), "no {id} segment")) << s;
}

TEST(CheckTemplateTest, RefusesAnUnclosedBrace) {
  EXPECT_FALSE(CheckTemplate(Json("RES-{counter"), {}).ok());
}

TEST(RandomUuidTest, IsVersion4AndFresh) {
  const std::string a = RandomUuid();
  ASSERT_EQ(a.size(), 36u);
  EXPECT_EQ(a[14], '4');
  EXPECT_NE(std::string("89ab").find(a[19]), std::string::npos) << a;
  EXPECT_NE(a, RandomUuid());
}

}  // namespace
}  // namespace outbox::sink
