// Copyright (c) edge-outbox authors.
//
// The sink's reading of a batch body: well-formed lines come back as the
// events, in order; each way of being malformed is refused.

#include "tools/sink/batch_body.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace outbox::sink {
namespace {

constexpr char kTwo[] =
    R"({"id":"e1","type":"sale.created","ordering_key":"till-1",)"
    R"("content_type":"application/json","data":"{\"n\":1}"})"
    "\n"
    R"({"id":"e2","type":"sale.voided","content_type":"application/octet-stream",)"
    R"("data_base64":"/wD+"})"
    "\n";

// ParseBatch's error for `body` with ids `ids`, or "" if it parsed.
std::string Error(const std::string& body, const std::string& ids,
                  std::optional<std::string> size = std::nullopt) {
  absl::StatusOr<std::vector<BatchEvent>> events = ParseBatch(body, ids, size);
  if (events.ok()) return "";
  EXPECT_EQ(events.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(events.status().message());
}

TEST(ParseBatchTest, LinesComeBackAsTheEventsInOrder) {
  absl::StatusOr<std::vector<BatchEvent>> events =
      ParseBatch(kTwo, "e1,e2", std::string("2"));
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].id, "e1");
  EXPECT_EQ((*events)[0].type, "sale.created");
  EXPECT_EQ((*events)[0].ordering_key, "till-1");
  EXPECT_EQ((*events)[0].content_type, "application/json");
  EXPECT_EQ((*events)[0].data, R"({"n":1})");
  EXPECT_EQ((*events)[1].id, "e2");
  EXPECT_EQ((*events)[1].ordering_key, "");
  EXPECT_EQ((*events)[1].data, std::string("\xff\x00\xfe", 3));
}

TEST(ParseBatchTest, IdsInAnotherOrderThanTheHeaderAreRefused) {
  EXPECT_TRUE(absl::StrContains(Error(kTwo, "e2,e1"), "outbox-event-ids"));
}

TEST(ParseBatchTest, MoreOrFewerIdsThanLinesAreRefused) {
  EXPECT_NE(Error(kTwo, "e1"), "");
  EXPECT_NE(Error(kTwo, "e1,e2,e3"), "");
}

TEST(ParseBatchTest, WrongBatchSizeIsRefused) {
  EXPECT_TRUE(
      absl::StrContains(Error(kTwo, "e1,e2", "3"), "outbox-batch-size"));
  EXPECT_NE(Error(kTwo, "e1,e2", "two"), "");
}

TEST(ParseBatchTest, LineThatIsNotJsonIsRefusedByNumber) {
  const std::string body = std::string(kTwo) + "{\"id\":\"e3\",\n";
  EXPECT_TRUE(absl::StrContains(Error(body, "e1,e2,e3"), "line 3"));
}

TEST(ParseBatchTest, LineThatIsJsonButNoObjectIsRefused) {
  const std::string body = std::string(kTwo) + "[\"e3\"]\n";
  EXPECT_TRUE(
      absl::StrContains(Error(body, "e1,e2,e3"), "line 3: not a JSON object"));
}

TEST(ParseBatchTest, EmptyLineIsRefused) {
  const std::string body = std::string(kTwo) + "\n";
  EXPECT_TRUE(absl::StrContains(Error(body, "e1,e2,"), "line 3"));
}

TEST(ParseBatchTest, BodyWithoutFinalNewlineIsRefused) {
  std::string body = kTwo;
  body.pop_back();
  EXPECT_TRUE(absl::StrContains(Error(body, "e1,e2"), "ending in"));
  EXPECT_TRUE(absl::StrContains(Error("", ""), "ending in"));
}

TEST(ParseBatchTest, LineWithoutIdTypeOrContentTypeIsRefused) {
  EXPECT_NE(Error(R"({"type":"t","content_type":"c","data":""})"
                  "\n",
                  ""),
            "");
  EXPECT_NE(Error(R"({"id":"e","content_type":"c","data":""})"
                  "\n",
                  "e"),
            "");
  EXPECT_NE(Error(R"({"id":"e","type":"t","data":""})"
                  "\n",
                  "e"),
            "");
  EXPECT_NE(Error(R"({"id":7,"type":"t","content_type":"c","data":""})"
                  "\n",
                  "7"),
            "");
  EXPECT_NE(Error(R"({"id":"","type":"t","content_type":"c","data":""})"
                  "\n",
                  ""),
            "");
}

TEST(ParseBatchTest, DataMustBeExactlyOneOfTextAndBase64) {
  EXPECT_TRUE(
      absl::StrContains(Error(R"({"id":"e","type":"t","content_type":"c"})"
                              "\n",
                              "e"),
                        "exactly one"));
  EXPECT_NE(Error(R"({"id":"e","type":"t","content_type":"c","data":"",)"
                  R"("data_base64":""})"
                  "\n",
                  "e"),
            "");
  EXPECT_NE(Error(R"({"id":"e","type":"t","content_type":"c","data":1})"
                  "\n",
                  "e"),
            "");
  EXPECT_EQ(Error(R"({"id":"e","type":"t","content_type":"c","data":""})"
                  "\n",
                  "e"),
            "");
}

TEST(ParseBatchTest, BadBase64IsRefused) {
  EXPECT_TRUE(absl::StrContains(
      Error(R"({"id":"e","type":"t","content_type":"c","data_base64":"*"})"
            "\n",
            "e"),
      "data_base64"));
}

TEST(ParseBatchTest, ErrorNeverQuotesTheBody) {
  const std::string body =
      R"({"id":"e","type":"t","content_type":"c","data_base64":"secret-x*"})"
      "\n";
  EXPECT_FALSE(absl::StrContains(Error(body, "e"), "secret"));
}

TEST(IsBatchTest, NdjsonWithTheIdsHeaderIsABatch) {
  EXPECT_TRUE(IsBatch(std::string("application/x-ndjson"), std::string("a")));
  EXPECT_TRUE(IsBatch(std::string("Application/X-NDJSON; charset=utf-8"),
                      std::string("a")));
}

TEST(IsBatchTest, EitherAloneIsNoBatch) {
  EXPECT_FALSE(IsBatch(std::string("application/x-ndjson"), std::nullopt));
  EXPECT_FALSE(IsBatch(std::string("application/json"), std::string("a")));
  EXPECT_FALSE(IsBatch(std::nullopt, std::string("a")));
}

}  // namespace
}  // namespace outbox::sink
