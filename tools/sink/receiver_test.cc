// Copyright (c) edge-outbox authors.

#include "tools/sink/receiver.h"

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tools/json_fields.h"
#include "tools/sink/request_log.h"
#include "webhooks/signature.h"

namespace outbox::sink {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr char kWrongSecret[] = "whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==";
const absl::Time kNow = absl::FromUnixSeconds(1767225600);

WebhookSecret Secret(const char* text) {
  absl::StatusOr<WebhookSecret> s = ParseWebhookSecret(text);
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

class ReceiverTest : public ::testing::Test {
 protected:
  void Build(SinkOptions options = SinkOptions()) {
    absl::StatusOr<std::unique_ptr<RequestLog>> log =
        RequestLog::Open(log_path_);
    ASSERT_OUTBOX_OK(log);
    log_ = *std::move(log);
    receiver_ = std::make_unique<Receiver>(
        std::vector<WebhookSecret>{Secret(kSecret)}, options, 1, log_.get());
  }

  // A request signed with `secret` at kNow.
  IncomingRequest Signed(const std::string& id, const std::string& body,
                         const char* secret = kSecret) {
    IncomingRequest r;
    r.method = "POST";
    r.path = "/hook";
    r.body = body;
    r.webhook_id = id;
    r.webhook_timestamp = std::to_string(absl::ToUnixSeconds(kNow));
    r.webhook_signature =
        Sign(Secret(secret), id, absl::ToUnixSeconds(kNow), body);
    r.content_type = "application/json";
    return r;
  }

  std::vector<std::string> Lines() { return ReadLines(log_path_); }

  testing::TempDir dir_;
  std::string log_path_ = dir_.Sub("log.jsonl");
  std::unique_ptr<RequestLog> log_;
  std::unique_ptr<Receiver> receiver_;
};

TEST_F(ReceiverTest, ValidSignatureIsAnswered200AndLoggedValid) {
  Build();
  Reply reply = receiver_->Handle(Signed("msg_1", R"({"a":1})"), kNow);
  EXPECT_FALSE(reply.drop);
  EXPECT_EQ(reply.status, 200);
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(JsonField(lines[0], "seq"), "1");
  EXPECT_EQ(JsonField(lines[0], "id"), "\"msg_1\"");
  EXPECT_EQ(JsonField(lines[0], "signature_valid"), "true");
  EXPECT_EQ(JsonField(lines[0], "signature_error"), "null");
  EXPECT_EQ(JsonField(lines[0], "duplicate"), "false");
  EXPECT_EQ(JsonField(lines[0], "status"), "200");
  EXPECT_EQ(JsonField(lines[0], "ts_ms"), "1767225600000");
  EXPECT_EQ(JsonField(lines[0], "body"), R"("{\"a\":1}")");
}

TEST_F(ReceiverTest, TypeHeaderIsLoggedAsType) {
  Build();
  IncomingRequest request = Signed("msg_1", "{}");
  request.event_type = "sale.created";
  receiver_->Handle(request, kNow);
  EXPECT_EQ(JsonString(Lines().at(0), "type"), "sale.created");
}

TEST_F(ReceiverTest, WrongSecretIsAnswered401AndLoggedInvalid) {
  Build();
  Reply reply = receiver_->Handle(Signed("msg_1", "{}", kWrongSecret), kNow);
  EXPECT_EQ(reply.status, 401);
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(JsonField(lines[0], "signature_valid"), "false");
  EXPECT_EQ(JsonField(lines[0], "signature_error"),
            "\"no matching signature\"");
}

TEST_F(ReceiverTest, StaleTimestampIsInvalid) {
  Build();
  Reply reply =
      receiver_->Handle(Signed("msg_1", "{}"), kNow + absl::Minutes(6));
  EXPECT_EQ(reply.status, 401);
  EXPECT_EQ(JsonField(Lines().at(0), "signature_error"),
            "\"webhook-timestamp outside tolerance\"");
}

TEST_F(ReceiverTest, MissingHeadersAreInvalid) {
  Build();
  IncomingRequest r = Signed("msg_1", "{}");
  r.webhook_signature.reset();
  EXPECT_EQ(receiver_->Handle(r, kNow).status, 401);
  r = Signed("msg_1", "{}");
  r.webhook_timestamp = "12x";
  EXPECT_EQ(receiver_->Handle(r, kNow).status, 401);
  r = Signed("msg_1", "{}");
  r.webhook_id.reset();
  EXPECT_EQ(receiver_->Handle(r, kNow).status, 401);
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(JsonField(lines[0], "signature_error"),
            "\"missing webhook-signature\"");
  EXPECT_EQ(JsonField(lines[1], "signature_error"),
            "\"webhook-timestamp is not an integer\"");
  EXPECT_EQ(JsonField(lines[2], "id"), "null");
}

TEST_F(ReceiverTest, DuplicateOnlyAfterA2xxAnswer) {
  SinkOptions options;
  options.faults.fail_rate = 1;  // Everything 503 ...
  Build(options);
  receiver_->Handle(Signed("msg_1", "{}"), kNow);
  IncomingRequest ok = Signed("msg_1", "{}");
  ok.path = "/status/200";  // ... except what a test pins to 200.
  receiver_->Handle(ok, kNow);
  receiver_->Handle(ok, kNow);
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(JsonField(lines[0], "status"), "503");
  EXPECT_EQ(JsonField(lines[0], "duplicate"), "false");
  EXPECT_EQ(JsonField(lines[1], "duplicate"), "false");
  EXPECT_EQ(JsonField(lines[2], "duplicate"), "true");
  EXPECT_EQ(JsonField(lines[2], "seq"), "3");
}

// Requests on many connections at once, as the agent sends them with 16 in
// flight: the file numbers the lines in its order, and the first line of
// each id is the one not marked duplicate.
TEST_F(ReceiverTest, ConcurrentRequestsAreLoggedInOrderWithOneFirstPerId) {
  Build();
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100;
  constexpr int kIds = 20;
  std::vector<IncomingRequest> requests;
  for (int i = 0; i < kIds; ++i) {
    requests.push_back(Signed(absl::StrCat("msg_", i), "{}"));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        receiver_->Handle(requests[(t + i) % kIds], kNow);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kPerThread));
  std::set<std::string> seen;
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_EQ(JsonField(lines[i], "seq"), std::to_string(i + 1)) << lines[i];
    const std::string id = JsonField(lines[i], "id").value_or("");
    const bool first = seen.insert(id).second;
    EXPECT_EQ(JsonField(lines[i], "duplicate"), first ? "false" : "true")
        << lines[i];
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kIds));
}

TEST_F(ReceiverTest, FixedStatusFromPathAndTypeHeader) {
  SinkOptions options;
  options.faults.status_for_type["order.voided"] = 422;
  Build(options);
  IncomingRequest r = Signed("msg_1", "{}");
  r.path = "/status/410";
  EXPECT_EQ(receiver_->Handle(r, kNow).status, 410);
  r = Signed("msg_2", "{}");
  r.event_type = "order.voided";
  EXPECT_EQ(receiver_->Handle(r, kNow).status, 422);
  r.event_type = "order.created";
  EXPECT_EQ(receiver_->Handle(r, kNow).status, 200);
  for (const char* path : {"/status/41", "/status/4100", "/status/099",
                           "/status/600", "/status/+41", "/x/status/410"}) {
    r.path = path;
    EXPECT_EQ(receiver_->Handle(r, kNow).status, 200) << path;
  }
}

TEST_F(ReceiverTest, ThrottleCarriesRetryAfter) {
  SinkOptions options;
  options.faults.throttle_rate = 1;
  options.faults.retry_after = "7";
  Build(options);
  Reply reply = receiver_->Handle(Signed("msg_1", "{}"), kNow);
  EXPECT_EQ(reply.status, 429);
  EXPECT_EQ(reply.retry_after, "7");
  IncomingRequest pinned = Signed("msg_2", "{}");
  pinned.path = "/status/429";
  EXPECT_EQ(receiver_->Handle(pinned, kNow).retry_after, "7");
}

TEST_F(ReceiverTest, DropIsLoggedWithStatusZero) {
  SinkOptions options;
  options.faults.drop_rate = 1;
  Build(options);
  Reply reply = receiver_->Handle(Signed("msg_1", "{}"), kNow);
  EXPECT_TRUE(reply.drop);
  std::string line = Lines().at(0);
  EXPECT_EQ(JsonField(line, "action"), "\"drop\"");
  EXPECT_EQ(JsonField(line, "status"), "0");
}

TEST_F(ReceiverTest, ResendAfterDropIsDuplicate) {
  SinkOptions options;
  options.faults.drop_rate = 1;  // drop, i.e. "processed, answer lost"
  Build(options);
  receiver_->Handle(Signed("msg_1", "{}"), kNow);
  IncomingRequest resend = Signed("msg_1", "{}");
  resend.path = "/status/200";
  receiver_->Handle(resend, kNow);
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(JsonField(lines[0], "duplicate"), "false");
  EXPECT_EQ(JsonField(lines[1], "duplicate"), "true");
}

TEST(RequestLogFormatTest, EscapesAndFallsBackToBase64) {
  LogRecord r;
  r.id = "a\"b";
  r.body = "line1\nq\"\\\x01";
  std::string line = FormatLogLine(9, r);
  EXPECT_EQ(JsonField(line, "id"), R"("a\"b")");
  EXPECT_EQ(JsonField(line, "body"), R"("line1\nq\"\\\u0001")");
  EXPECT_EQ(JsonField(line, "idempotency_key"), "null");
  r.body = std::string("\xff\xfe", 2);
  line = FormatLogLine(10, r);
  EXPECT_EQ(JsonField(line, "body"), std::nullopt);
  EXPECT_EQ(JsonField(line, "body_base64"), "\"//4=\"");
}

// Tests and scripts read these lines: names, order and encodings are fixed.
TEST(RequestLogFormatTest, LinesAreStableByteForByte) {
  LogRecord r;
  r.id = "a\"b";
  r.webhook_timestamp = 1767225600;
  r.received = absl::FromUnixMillis(1767225600123);
  r.method = "POST";
  r.path = std::string("/p\xff\x01", 4);  // not UTF-8: C-escaped
  r.signature_valid = true;
  r.status = 200;
  r.idempotency_key = "k\x01";
  r.content_type = "application/json";
  r.route = "POST /p";
  r.response = "{\"id\":\"R\\\"1\"}";
  r.body = "line1\nq\"\\\x01 caf\xC3\xA9";
  EXPECT_EQ(FormatLogLine(9, r),
            R"({"seq":9,"id":"a\"b","webhook_timestamp":1767225600,)"
            R"("ts_ms":1767225600123,"method":"POST","path":"/p\\xff\\x01",)"
            R"("signature_valid":true,"signature_error":null,)"
            R"("duplicate":false,"action":"answer","status":200,)"
            R"("idempotency_key":"k\u0001","content_type":"application/json",)"
            R"("route":"POST /p","route_error":null,)"
            R"("response":"{\"id\":\"R\\\"1\"}",)"
            R"("type":null,"batch_id":null,"batch_size":null,)"
            "\"body\":\"line1\\nq\\\"\\\\\\u0001 caf\xC3\xA9\"}");
  r.id.reset();
  r.webhook_timestamp.reset();
  r.dropped = true;
  r.status = 0;
  r.signature_valid = false;
  r.signature_error = "no webhook-signature header";
  r.route_error = "{request:/a}: the request body has no value there";
  r.response.reset();
  r.body = std::string("\xff\xfe", 2);
  r.type = "sale.created";
  r.batch_id = "batch_1";
  r.batch_size = 3;
  EXPECT_EQ(
      FormatLogLine(10, r),
      R"({"seq":10,"id":null,"webhook_timestamp":null,)"
      R"("ts_ms":1767225600123,"method":"POST","path":"/p\\xff\\x01",)"
      R"("signature_valid":false,)"
      R"("signature_error":"no webhook-signature header",)"
      R"("duplicate":false,"action":"drop","status":0,)"
      R"("idempotency_key":"k\u0001","content_type":"application/json",)"
      R"("route":"POST /p",)"
      R"("route_error":"{request:/a}: the request body has no value there",)"
      R"("response":null,"type":"sale.created","batch_id":"batch_1",)"
      R"("batch_size":3,"body_base64":"//4="})");
}

TEST(RequestLogFormatTest, BodyCannotForgeAKey) {
  LogRecord r;
  r.status = 503;
  r.body = R"(x","status":200,"y":")";
  EXPECT_EQ(JsonField(FormatLogLine(1, r), "status"), "503");
}

class ReceiverRoutesTest : public ReceiverTest {
 protected:
  void SetUp() override {
    absl::StatusOr<RouteTable> routes = RouteTable::Parse(
        R"({"routes": [
          {"route": "POST /fraud", "body": {"riskScore": "{request:/score}"}},
          {"route": "DELETE /res/{id}", "body": {"released": "{path:id}"}},
          {"route": "POST /reserve",
           "body": {"reservationId": "RES-{counter}", "token": "{uuid}"}},
          {"route": "POST /busy", "status": 503,
           "body": {"attempt": "{counter}"}}
        ]})",
        "test");
    ASSERT_OUTBOX_OK(routes);
    routes_ = *std::move(routes);
    absl::StatusOr<std::unique_ptr<RequestLog>> log =
        RequestLog::Open(log_path_);
    ASSERT_OUTBOX_OK(log);
    log_ = *std::move(log);
    receiver_ =
        std::make_unique<Receiver>(std::vector<WebhookSecret>{Secret(kSecret)},
                                   SinkOptions(), 1, log_.get(), &routes_);
  }

  IncomingRequest At(const std::string& method, const std::string& path,
                     const std::string& body, const std::string& id = "msg_1") {
    IncomingRequest r = Signed(id, body);
    r.method = method;
    r.path = path;
    r.raw_path = path;
    return r;
  }

  RouteTable routes_;
};

TEST_F(ReceiverRoutesTest, MatchedRouteAnswersItsBodyAndLogsRouteAndResponse) {
  Reply reply =
      receiver_->Handle(At("POST", "/fraud", R"({"score":75})"), kNow);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, R"({"riskScore":75})");
  EXPECT_EQ(reply.content_type, "application/json");
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(JsonString(lines[0], "route"), "POST /fraud");
  EXPECT_EQ(JsonString(lines[0], "response"), R"({"riskScore":75})");
  EXPECT_EQ(JsonField(lines[0], "route_error"), "null");
}

TEST_F(ReceiverRoutesTest, OtherMethodsAreRoutedToo) {
  Reply reply = receiver_->Handle(At("DELETE", "/res/R-1", ""), kNow);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, R"({"released":"R-1"})");
}

TEST_F(ReceiverRoutesTest, MissingPointerAnswers500AndLogsTheReason) {
  Reply reply = receiver_->Handle(At("POST", "/fraud", R"({"x":1})"), kNow);
  EXPECT_EQ(reply.status, 500);
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(JsonField(lines[0], "status"), "500");
  EXPECT_TRUE(absl::StrContains(JsonString(lines[0], "route_error"), "/score"))
      << lines[0];
  EXPECT_EQ(JsonString(lines[0], "response"), reply.body);
}

TEST_F(ReceiverRoutesTest, PathNoRouteMatchesIsAnswered404) {
  Reply reply = receiver_->Handle(At("POST", "/nowhere", "{}"), kNow);
  EXPECT_EQ(reply.status, 404);
  EXPECT_EQ(JsonField(Lines().at(0), "route"), "null");
}

TEST_F(ReceiverRoutesTest, BadSignatureIs401EvenOnARoute) {
  IncomingRequest r = At("DELETE", "/res/R-1", "");
  r.webhook_signature =
      Sign(Secret(kWrongSecret), "msg_1", absl::ToUnixSeconds(kNow), "");
  EXPECT_EQ(receiver_->Handle(r, kNow).status, 401);
  EXPECT_EQ(JsonString(Lines().at(0), "route"), "DELETE /res/{id}");
}

TEST_F(ReceiverRoutesTest, ResendGetsTheFirstAnswerAgain) {
  const Reply first = receiver_->Handle(At("POST", "/reserve", "{}"), kNow);
  const Reply again = receiver_->Handle(At("POST", "/reserve", "{}"), kNow);
  EXPECT_EQ(JsonString(first.body, "reservationId"), "RES-1");
  EXPECT_EQ(again.status, first.status);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(again.content_type, "application/json");
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(JsonField(lines[1], "duplicate"), "true");
  EXPECT_EQ(JsonString(lines[1], "response"), first.body);
}

TEST_F(ReceiverRoutesTest, ResendDoesNotAdvanceTheCounter) {
  receiver_->Handle(At("POST", "/reserve", "{}", "msg_1"), kNow);
  receiver_->Handle(At("POST", "/reserve", "{}", "msg_1"), kNow);
  const Reply next =
      receiver_->Handle(At("POST", "/reserve", "{}", "msg_2"), kNow);
  EXPECT_EQ(JsonString(next.body, "reservationId"), "RES-2");
}

TEST_F(ReceiverRoutesTest, AnotherIdGetsANewAnswer) {
  const Reply a = receiver_->Handle(At("POST", "/reserve", "{}", "a"), kNow);
  const Reply b = receiver_->Handle(At("POST", "/reserve", "{}", "b"), kNow);
  EXPECT_EQ(JsonString(a.body, "reservationId"), "RES-1");
  EXPECT_EQ(JsonString(b.body, "reservationId"), "RES-2");
  EXPECT_NE(JsonString(a.body, "token"), JsonString(b.body, "token"));
  EXPECT_EQ(JsonField(Lines().at(1), "duplicate"), "false");
}

TEST_F(ReceiverRoutesTest, SameIdOnAnotherPathGetsItsOwnAnswer) {
  receiver_->Handle(At("DELETE", "/res/R-1", ""), kNow);
  const Reply other = receiver_->Handle(At("DELETE", "/res/R-2", ""), kNow);
  EXPECT_EQ(other.body, R"({"released":"R-2"})");
}

TEST_F(ReceiverRoutesTest, RetryAfterANon2xxAnswerIsAnsweredAfresh) {
  const Reply first = receiver_->Handle(At("POST", "/busy", "{}"), kNow);
  const Reply retry = receiver_->Handle(At("POST", "/busy", "{}"), kNow);
  EXPECT_EQ(first.status, 503);
  EXPECT_EQ(first.body, R"({"attempt":1})");
  EXPECT_EQ(retry.status, 503);
  EXPECT_EQ(retry.body, R"({"attempt":2})");
}

}  // namespace
}  // namespace outbox::sink
