// Copyright (c) edge-outbox authors.

#include "tools/json_fields.h"

#include "gtest/gtest.h"

namespace outbox {
namespace {

TEST(JsonFieldTest, PrintsAMemberBackAsCompactJson) {
  const char line[] = R"({"seq":3,"id":"a\"b","ok":true,"v":null})";
  EXPECT_EQ(JsonField(line, "seq"), "3");
  EXPECT_EQ(JsonField(line, "id"), R"("a\"b")");
  EXPECT_EQ(JsonField(line, "ok"), "true");
  EXPECT_EQ(JsonField(line, "v"), "null");
}

TEST(JsonFieldTest, AbsentMemberOrNotAnObjectIsNullopt) {
  EXPECT_EQ(JsonField(R"({"a":1})", "b"), std::nullopt);
  EXPECT_EQ(JsonField("[1,2]", "a"), std::nullopt);
  EXPECT_EQ(JsonField("{\"a\":", "a"), std::nullopt);
}

TEST(JsonStringTest, ReturnsOnlyStringValuesUnescaped) {
  EXPECT_EQ(JsonString(R"({"body":"{\"n\":1}"})", "body"), R"({"n":1})");
  EXPECT_EQ(JsonString(R"({"n":1})", "n"), "");
  EXPECT_EQ(JsonString("not json", "n"), "");
}

}  // namespace
}  // namespace outbox
