// Copyright (c) edge-outbox authors.
//
// Batched HTTP without sockets: the body decodes back to the events in
// order, the headers carry the batch id, the ids and a signature over the
// whole body, and LinesThatFit packs within its limits.

#include "agent/send/batch_request.h"

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/batch_request.h"
#include "tests/testing/request_headers.h"
#include "webhooks/signature.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);  // 2026-01-01

PendingEvent Sale(int n) {
  PendingEvent e;
  e.seq = static_cast<uint64_t>(n);
  e.id = absl::StrCat("0190a5c4-7d2e-7b3a-9c1f-00000000000", n);
  e.type = n % 2 == 0 ? "sale.created" : "sale.voided";
  e.payload = absl::StrCat(R"({"sale":"till-1-)", n, R"(","note":"a\nb"})");
  e.content_type = "application/json";
  e.ordering_key = "till-1";
  return e;
}

std::vector<const PendingEvent*> Pointers(const std::vector<PendingEvent>& v) {
  std::vector<const PendingEvent*> p;
  for (const PendingEvent& e : v) p.push_back(&e);
  return p;
}

Destination Backend() {
  Destination d;
  d.url = "https://api.example.com/webhooks";
  return d;
}

// The body's lines, each parsed; a line that is not JSON fails the test.
std::vector<nlohmann::json> Lines(const std::string& body) {
  std::vector<nlohmann::json> lines;
  EXPECT_TRUE(absl::EndsWith(body, "\n"));
  for (absl::string_view line : absl::StrSplit(body, '\n', absl::SkipEmpty())) {
    lines.push_back(nlohmann::json::parse(line, nullptr, false));
    EXPECT_FALSE(lines.back().is_discarded()) << line;
  }
  return lines;
}

TEST(BuildBatchRequestTest, LinesDecodeBackToTheEventsInOrder) {
  const std::vector<PendingEvent> events = {Sale(1), Sale(2), Sale(3)};
  const HttpRequest r =
      testing::BatchRequestOf(Pointers(events), Backend(), kNow, 1);
  const std::vector<nlohmann::json> lines = Lines(r.body);
  ASSERT_EQ(lines.size(), events.size()) << r.body;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(lines[i].value("id", ""), events[i].id);
    EXPECT_EQ(lines[i].value("type", ""), events[i].type);
    EXPECT_EQ(lines[i].value("ordering_key", ""), events[i].ordering_key);
    EXPECT_EQ(lines[i].value("content_type", ""), events[i].content_type);
    EXPECT_EQ(lines[i].value("data", ""), events[i].payload);
    EXPECT_FALSE(lines[i].contains("data_base64"));
  }
}

TEST(BuildBatchRequestTest, EmptyOrderingKeyIsLeftOut) {
  std::vector<PendingEvent> events = {Sale(1)};
  events[0].ordering_key.clear();
  const HttpRequest r =
      testing::BatchRequestOf(Pointers(events), Backend(), kNow, 1);
  EXPECT_FALSE(Lines(r.body).at(0).contains("ordering_key")) << r.body;
}

TEST(BuildBatchRequestTest, PayloadThatIsNotUtf8GoesAsBase64) {
  std::vector<PendingEvent> events = {Sale(1), Sale(2)};
  events[1].payload = std::string(
      "\xff\x00\xfe"
      "bin",
      6);
  const HttpRequest r =
      testing::BatchRequestOf(Pointers(events), Backend(), kNow, 1);
  const std::vector<nlohmann::json> lines = Lines(r.body);
  ASSERT_EQ(lines.size(), 2u) << r.body;
  EXPECT_EQ(lines[0].value("data", ""), events[0].payload);
  EXPECT_FALSE(lines[1].contains("data"));
  std::string decoded;
  ASSERT_TRUE(
      absl::Base64Unescape(lines[1].value("data_base64", ""), &decoded));
  EXPECT_EQ(decoded, events[1].payload);
}

TEST(BuildBatchRequestTest, TypeThatIsNotUtf8StillGivesOneJsonLine) {
  std::vector<PendingEvent> events = {Sale(1)};
  events[0].type = "sale\xff";
  const HttpRequest r =
      testing::BatchRequestOf(Pointers(events), Backend(), kNow, 1);
  const std::vector<nlohmann::json> lines = Lines(r.body);
  ASSERT_EQ(lines.size(), 1u) << r.body;
  EXPECT_EQ(lines[0].value("id", ""), events[0].id);
  std::string decoded;
  ASSERT_TRUE(
      absl::Base64Unescape(lines[0].value("data_base64", ""), &decoded));
  EXPECT_EQ(decoded, events[0].payload);
}

TEST(BuildBatchRequestTest, HeadersNameTheBatchAndItsEvents) {
  const std::vector<PendingEvent> events = {Sale(1), Sale(2), Sale(3)};
  const HttpRequest r =
      testing::BatchRequestOf(Pointers(events), Backend(), kNow, 1);
  // BatchId of the three ids, computed outside this code (batch_request.h's
  // definition): printf '<id 1>\n<id 2>\n<id 3>' | sha256sum | cut -c1-32.
  const std::string id = "batch_ba6367fd6ba6082440b4358941832645";
  EXPECT_THAT(testing::HeaderValues(r, "Content-Type"),
              ElementsAre("application/x-ndjson"));
  EXPECT_THAT(testing::HeaderValues(r, "webhook-id"), ElementsAre(id));
  EXPECT_THAT(testing::HeaderValues(r, "Idempotency-Key"), ElementsAre(id));
  EXPECT_THAT(testing::HeaderValues(r, "webhook-timestamp"),
              ElementsAre(absl::StrCat(absl::ToUnixSeconds(kNow))));
  EXPECT_THAT(testing::HeaderValues(r, "outbox-event-ids"),
              ElementsAre(absl::StrCat(events[0].id, ",", events[1].id, ",",
                                       events[2].id)));
  EXPECT_THAT(testing::HeaderValues(r, "outbox-batch-size"), ElementsAre("3"));
  EXPECT_THAT(testing::HeaderValues(r, "x-event-type"), IsEmpty());
}

TEST(BuildBatchRequestTest, SignatureVerifiesOverTheWholeBodyPerSecret) {
  Destination d = Backend();
  d.secrets = {WebhookSecret("first-key-0123456789abcdef"),
               WebhookSecret("second-key-0123456789abcdef")};
  const std::vector<PendingEvent> events = {Sale(1), Sale(2)};
  const HttpRequest r = testing::BatchRequestOf(Pointers(events), d, kNow, 1);
  const std::vector<std::string> signature =
      testing::HeaderValues(r, "webhook-signature");
  ASSERT_EQ(signature.size(), 1u);
  const std::vector<std::string> entries = absl::StrSplit(signature[0], ' ');
  ASSERT_EQ(entries.size(), d.secrets.size()) << signature[0];
  const std::string id = testing::HeaderValues(r, "webhook-id").at(0);
  const int64_t ts = absl::ToUnixSeconds(kNow);
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_TRUE(VerifySignature({d.secrets[i]}, id, ts, r.body, entries[i]))
        << "entry " << i;
  }
  // Over the body as a whole: the first line alone does not verify.
  const std::string first_line = r.body.substr(0, r.body.find('\n') + 1);
  EXPECT_FALSE(VerifySignature(d.secrets, id, ts, first_line, signature[0]));
}

TEST(BuildBatchRequestTest, ACompressedBodyIsSignedBeforeItIsCompressed) {
  Destination d = Backend();
  d.secrets = {WebhookSecret("first-key-0123456789abcdef")};
  const std::vector<PendingEvent> events = {Sale(1), Sale(2), Sale(3)};
  const HttpRequest plain =
      testing::BatchRequestOf(Pointers(events), d, kNow, 1);
  EXPECT_EQ(testing::HeaderValue(plain, "Content-Encoding"), std::nullopt);
  for (BodyCoding coding : {BodyCoding::kGzip, BodyCoding::kZstd}) {
    d.batch.compression = coding;
    const HttpRequest r = testing::BatchRequestOf(Pointers(events), d, kNow, 1);
    EXPECT_EQ(testing::HeaderValue(r, "Content-Encoding"),
              std::string(BodyCodingName(coding)));
    absl::StatusOr<std::string> body = DecodeBody(coding, r.body, 1 << 20);
    ASSERT_TRUE(body.ok()) << body.status();
    EXPECT_EQ(*body, plain.body);  // the same lines, compressed
    const std::string signature =
        testing::HeaderValues(r, "webhook-signature").at(0);
    const std::string id = testing::HeaderValues(r, "webhook-id").at(0);
    const int64_t ts = absl::ToUnixSeconds(kNow);
    EXPECT_TRUE(VerifySignature(d.secrets, id, ts, *body, signature));
    EXPECT_FALSE(VerifySignature(d.secrets, id, ts, r.body, signature));
  }
}

TEST(BuildBatchRequestTest, DestinationHeadersAndSettingsAreKept) {
  Destination d = Backend();
  d.headers = {{"Authorization", "Bearer t"}};
  d.timeout = absl::Seconds(17);
  d.proxy = "http://proxy.local:3128";
  const std::vector<PendingEvent> events = {Sale(1)};
  const HttpRequest r = testing::BatchRequestOf(Pointers(events), d, kNow, 42);
  EXPECT_THAT(testing::HeaderValues(r, "Authorization"),
              ElementsAre("Bearer t"));
  EXPECT_EQ(r.tag, 42u);
  EXPECT_EQ(r.url, d.url);
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.total_timeout, absl::Seconds(17));
  EXPECT_EQ(r.proxy, d.proxy);
}

// Known answers, computed outside this code from batch_request.h's
// definition: printf 'a\nb\nc' | sha256sum | cut -c1-32, and the digest of
// nothing for no ids. A receiver deduplicates on this id across versions of
// the agent: it must never change.
TEST(BatchIdTest, IsTheFirst128BitsOfSha256OverTheIdsJoinedByNewlines) {
  EXPECT_EQ(BatchId({"a", "b", "c"}), "batch_ea7fb08b7a2dc4619ffb7c7bb38d95a2");
  EXPECT_EQ(BatchId({}), "batch_e3b0c44298fc1c149afbf4c8996fb924");
}

TEST(BatchIdTest, SameIdsGiveTheSameId) {
  EXPECT_EQ(BatchId({"a", "b", "c"}), BatchId({"a", "b", "c"}));
}

TEST(BatchIdTest, IsBatchPrefixAnd32HexDigits) {
  const std::string id = BatchId({"a", "b"});
  ASSERT_TRUE(absl::StartsWith(id, "batch_")) << id;
  const std::string hex = id.substr(6);
  EXPECT_EQ(hex.size(), 32u) << id;
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(BatchIdTest, AnotherSetOrOrderGivesAnotherId) {
  const std::string id = BatchId({"a", "b", "c"});
  EXPECT_NE(id, BatchId({"a", "b"}));
  EXPECT_NE(id, BatchId({"a", "b", "c", "d"}));
  EXPECT_NE(id, BatchId({"b", "a", "c"}));
  // The separator keeps ids apart: "a","bc" is not "ab","c".
  EXPECT_NE(BatchId({"a", "bc"}), BatchId({"ab", "c"}));
}

// --- LinesThatFit ------------------------------------------------------------

class LinesThatFitTest : public ::testing::Test {
 protected:
  LinesThatFitTest() : events_({Sale(1), Sale(2), Sale(3), Sale(4)}) {}

  size_t LineSize(int i) const { return BatchLine(events_[i]).size(); }

  // How many of events_ join a batch holding `held_events` events and
  // `held_bytes` of body, measured as the agent measures them.
  size_t Fit(size_t held_events, size_t held_bytes, size_t max_events,
             size_t max_bytes) const {
    std::vector<std::string> lines;
    for (const PendingEvent& e : events_) lines.push_back(BatchLine(e));
    return LinesThatFit(lines, held_events, held_bytes, max_events, max_bytes);
  }

  std::vector<PendingEvent> events_;
};

TEST_F(LinesThatFitTest, AllFitWithinGenerousLimits) {
  EXPECT_EQ(Fit(0, 0, 100, 1 << 20), 4u);
}

TEST_F(LinesThatFitTest, StopsAtMaxEvents) {
  EXPECT_EQ(Fit(0, 0, 3, 1 << 20), 3u);
}

TEST_F(LinesThatFitTest, BodyOfExactlyMaxBytesFits) {
  const size_t two = LineSize(0) + LineSize(1);
  EXPECT_EQ(Fit(0, 0, 100, two), 2u);
  EXPECT_EQ(Fit(0, 0, 100, two - 1), 1u);
}

TEST_F(LinesThatFitTest, EventLargerThanMaxBytesGoesAloneInAnEmptyBatch) {
  events_[0].payload = std::string(1000, 'x');
  EXPECT_EQ(Fit(0, 0, 100, 100), 1u);
}

TEST_F(LinesThatFitTest, NoCandidatesGiveZero) {
  EXPECT_EQ(LinesThatFit({}, 0, 0, 100, 1 << 20), 0u);
  EXPECT_EQ(LinesThatFit({}, 2, 300, 100, 1 << 20), 0u);
}

TEST_F(LinesThatFitTest, MaxEventsZeroCountsAsOne) {
  EXPECT_EQ(Fit(0, 0, 0, 1 << 20), 1u);
  EXPECT_EQ(Fit(1, 10, 0, 1 << 20), 0u);
}

TEST_F(LinesThatFitTest, PackedBodyIsWithinMaxBytes) {
  const size_t max_bytes = LineSize(0) + LineSize(1) + LineSize(2) / 2;
  const size_t n = Fit(0, 0, 100, max_bytes);
  EXPECT_EQ(n, 2u);
  std::vector<const PendingEvent*> packed = Pointers(events_);
  packed.resize(n);
  EXPECT_LE(testing::BatchRequestOf(packed, Backend(), kNow, 1).body.size(),
            max_bytes);
}

// A batch that already holds events (the agent adds one key's run at a
// time): its body and its events count against the limits.

TEST_F(LinesThatFitTest, HeldBytesLeaveRoomForFewer) {
  const size_t held = 1000;
  const size_t max_bytes = held + LineSize(0) + LineSize(1) + 1;
  EXPECT_EQ(Fit(3, held, 100, max_bytes), 2u);
  EXPECT_EQ(Fit(3, held, 100, held + LineSize(0)), 1u);
}

TEST_F(LinesThatFitTest, HeldEventsCountTowardMaxEvents) {
  EXPECT_EQ(Fit(2, 10, 3, 1 << 20), 1u);
  EXPECT_EQ(Fit(3, 10, 3, 1 << 20), 0u);
}

TEST_F(LinesThatFitTest, HeldBatchTakesNoneWhenTheFirstDoesNotFit) {
  // Unlike an empty batch, one that holds events leaves an oversized event
  // for the next batch, and so an exactly full one takes nothing more.
  events_[0].payload = std::string(1000, 'x');
  EXPECT_EQ(Fit(1, 50, 100, 100), 0u);
  EXPECT_EQ(Fit(1, 1 << 20, 100, 1 << 20), 0u);
}

}  // namespace
}  // namespace outbox
