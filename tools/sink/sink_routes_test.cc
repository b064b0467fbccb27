// Copyright (c) edge-outbox authors.
//
// outbox-sink playing seed 003's services: the real binary started with
// tools/sink/testdata/seed003_routes.json, every service called over HTTP
// with signed requests, answers checked against what the log recorded.

#include <httplib.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"
#include "tests/testing/temp_dir.h"
#include "tools/json_fields.h"
#include "webhooks/signature.h"

namespace outbox::sink {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

// The JSON body of `res`, or null if it has none or it is not JSON.
nlohmann::json BodyOf(const httplib::Result& res) {
  if (!res) return nullptr;
  return nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
}

class SinkRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(secret_path_) << kSecret << "\n";
    ASSERT_EQ(chmod(secret_path_.c_str(), 0600), 0);
    absl::StatusOr<std::unique_ptr<SinkProcess>> sink = SinkProcess::Start(
        testing::TargetCommand(OUTBOX_SINK_BINARY,
                               {"--secret-file", secret_path_, "--log",
                                log_path_, "--routes", OUTBOX_SEED_ROUTES}),
        dir_.path());
    ASSERT_OUTBOX_OK(sink);
    sink_ = *std::move(sink);
  }

  void TearDown() override {
    if (sink_ == nullptr) return;
    EXPECT_OUTBOX_OK(StopCleanly(sink_.get()));
  }

  // Sends `body` as webhook `id` with `method` to `path`, signed unless
  // `signed_request` is false, as the agent sends steps and reverts.
  httplib::Result Send(const std::string& method, const std::string& path,
                       const std::string& id, const std::string& body,
                       bool signed_request = true) {
    absl::StatusOr<WebhookSecret> secret = ParseWebhookSecret(kSecret);
    EXPECT_TRUE(secret.ok());
    const int64_t ts = absl::ToUnixSeconds(absl::Now());
    httplib::Request req;
    req.method = method;
    req.path = path;
    req.body = body;
    req.headers = {{"webhook-id", id},
                   {"webhook-timestamp", std::to_string(ts)},
                   {"Content-Type", "application/json"}};
    if (signed_request) {
      req.headers.emplace("webhook-signature", Sign(*secret, id, ts, body));
    }
    httplib::Client client("127.0.0.1", sink_->port());
    client.set_read_timeout(5, 0);
    return client.send(req);
  }

  // The log line of request number `seq` (1-based), "" if there is none.
  std::string Line(size_t seq) {
    std::vector<std::string> lines = ReadLines(log_path_);
    return seq <= lines.size() ? lines[seq - 1] : "";
  }

  testing::TempDir dir_;
  std::string secret_path_ = dir_.Sub("secrets");
  std::string log_path_ = dir_.Sub("sink.jsonl");
  std::unique_ptr<SinkProcess> sink_;
};

TEST_F(SinkRoutesTest, InventoryReservesAndReleasesByTheIdItAnswered) {
  httplib::Result reserved =
      Send("POST", "/api/inventory/reserve", "step-1", R"({"sku":"A1"})");
  ASSERT_TRUE(reserved) << httplib::to_string(reserved.error());
  EXPECT_EQ(reserved->status, 200);
  EXPECT_EQ(reserved->get_header_value("Content-Type"), "application/json");
  const nlohmann::json answer = BodyOf(reserved);
  ASSERT_TRUE(answer.contains("reservationId")) << reserved->body;
  const std::string id = answer["reservationId"];

  httplib::Result released =
      Send("DELETE", "/api/inventory/" + id + "/release", "revert-1", "");
  ASSERT_TRUE(released) << httplib::to_string(released.error());
  EXPECT_EQ(released->status, 200);
  EXPECT_EQ(BodyOf(released)["reservationId"], id);

  // The log holds what each answer said, so a test can match a revert's
  // path against the id the forward step was given.
  EXPECT_EQ(JsonString(Line(1), "route"), "POST /api/inventory/reserve");
  EXPECT_EQ(JsonString(Line(1), "response"), reserved->body);
  EXPECT_EQ(JsonString(Line(2), "route"),
            "DELETE /api/inventory/{reservationId}/release");
  EXPECT_EQ(JsonString(Line(2), "method"), "DELETE");
  EXPECT_EQ(JsonString(Line(2), "path"), "/api/inventory/" + id + "/release");
  EXPECT_EQ(JsonString(Line(2), "response"), released->body);
}

// The agent resends a step whose answer it did not get: an idempotent
// inventory service tells it the reservation it already made.
TEST_F(SinkRoutesTest, ResentReserveGetsTheSameReservationId) {
  httplib::Result first =
      Send("POST", "/api/inventory/reserve", "step-1", R"({"sku":"A1"})");
  httplib::Result resent =
      Send("POST", "/api/inventory/reserve", "step-1", R"({"sku":"A1"})");
  httplib::Result next =
      Send("POST", "/api/inventory/reserve", "step-1b", R"({"sku":"B2"})");
  ASSERT_TRUE(first) << httplib::to_string(first.error());
  ASSERT_TRUE(resent) << httplib::to_string(resent.error());
  ASSERT_TRUE(next) << httplib::to_string(next.error());
  EXPECT_EQ(BodyOf(first)["reservationId"], "RES-1");
  EXPECT_EQ(resent->status, first->status);
  EXPECT_EQ(resent->body, first->body);
  EXPECT_EQ(resent->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(JsonField(Line(2), "duplicate"), "true");
  EXPECT_EQ(BodyOf(next)["reservationId"], "RES-2");
}

TEST_F(SinkRoutesTest, FraudCheckAnswersTheRiskScoreTheRequestCarries) {
  httplib::Result low =
      Send("POST", "/api/fraud/check", "step-2a", R"({"riskScore":25})");
  httplib::Result high =
      Send("POST", "/api/fraud/check", "step-2b", R"({"riskScore":75})");
  ASSERT_TRUE(low);
  ASSERT_TRUE(high);
  EXPECT_EQ(BodyOf(low)["riskScore"], 25);
  EXPECT_EQ(BodyOf(high)["riskScore"], 75);
}

TEST_F(SinkRoutesTest, FraudCheckWithoutARiskScoreAnswers500AndLogsWhy) {
  httplib::Result res = Send("POST", "/api/fraud/check", "step-2", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500);
  EXPECT_TRUE(
      absl::StrContains(JsonString(Line(1), "route_error"), "/riskScore"))
      << Line(1);
}

TEST_F(SinkRoutesTest, ShippingCancelEchoesTheShipmentIdItAnswered) {
  httplib::Result shipped = Send("POST", "/api/domestic-shipping", "step-3",
                                 R"({"shippingType":"domestic"})");
  ASSERT_TRUE(shipped);
  const std::string id = BodyOf(shipped)["shipmentId"];
  httplib::Result cancelled =
      Send("POST", "/api/domestic-shipping/" + id + "/cancel", "revert-3",
           R"({"reason":"payment_failed"})");
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->status, 200);
  EXPECT_EQ(BodyOf(cancelled)["shipmentId"], id);
  EXPECT_EQ(BodyOf(cancelled)["cancelled"], true);
}

TEST_F(SinkRoutesTest, EachShippingAnswerHasItsOwnId) {
  httplib::Result a = Send("POST", "/api/international-shipping", "a", "{}");
  httplib::Result b = Send("POST", "/api/international-shipping", "b", "{}");
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_NE(BodyOf(a)["shipmentId"], BodyOf(b)["shipmentId"]);
}

TEST_F(SinkRoutesTest, BillingAnswers200UnlessTheRequestAsksForADecline) {
  httplib::Result charged =
      Send("POST", "/api/billing", "step-4a", R"({"amount":"99.99"})");
  httplib::Result declined = Send("POST", "/api/high-value-processing",
                                  "step-4b", R"({"simulate":"decline"})");
  ASSERT_TRUE(charged);
  ASSERT_TRUE(declined);
  EXPECT_EQ(charged->status, 200);
  EXPECT_EQ(declined->status, 422);
  EXPECT_EQ(BodyOf(declined)["error"], "card declined");
  EXPECT_EQ(JsonField(Line(2), "status"), "422");
}

TEST_F(SinkRoutesTest, UnsignedRevertIsRejected) {
  httplib::Result res = Send("DELETE", "/api/inventory/RES-1/release", "r", "",
                             /*signed_request=*/false);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(JsonField(Line(1), "signature_valid"), "false");
}

TEST_F(SinkRoutesTest, PathNoRouteMatchesIsAnswered404AndLogged) {
  httplib::Result res = Send("POST", "/api/unknown", "x", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(JsonField(Line(1), "route"), "null");
}

TEST_F(SinkRoutesTest, MethodNoRouteUsesIsLeftToHttplib) {
  httplib::Result res = Send("PUT", "/api/billing", "x", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(Line(1), "");  // httplib answered: the sink never saw it.
}

TEST(SinkRoutesFileTest, BadRoutesFileExitsWithUsageErrorNamingIt) {
  testing::TempDir dir;
  const std::string secrets = dir.Sub("secrets");
  std::ofstream(secrets) << kSecret << "\n";
  ASSERT_EQ(chmod(secrets.c_str(), 0600), 0);
  const std::string routes = dir.Sub("routes.json");
  std::ofstream(routes) << R"({"routes": [{"route": "POST /a", "status": 7}]})";
  absl::StatusOr<ExitResult> r =
      RunToExit(OUTBOX_SINK_BINARY, dir.path(),
                {"--port", "0", "--secret-file", secrets, "--log",
                 dir.Sub("log"), "--routes", routes});
  ASSERT_OUTBOX_OK(r);
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_TRUE(absl::StrContains(
      r->err, "routes file " + routes + ": routes[0]: status: want an integer"))
      << r->err;
  EXPECT_FALSE(absl::StrContains(r->out, "listening")) << r->out;
}

}  // namespace
}  // namespace outbox::sink
