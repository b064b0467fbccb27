// Copyright (c) edge-outbox authors.
//
// End-to-end tests of the outbox-sink binary over plain HTTP: each test
// starts the real process on a free port, talks to it with an httplib client
// and reads its request log.

#include <httplib.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"
#include "tests/testing/temp_dir.h"
#include "tools/json_fields.h"
#include "webhooks/signature.h"

namespace outbox::sink {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr char kRotatedSecret[] = "whsec_bmV3LWtleS1hZnRlci1yb3RhdGlvbi0yMDI2";
constexpr char kWrongSecret[] = "whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==";

class SinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(secret_path_) << kSecret << "\n" << kRotatedSecret << "\n";
    ASSERT_EQ(chmod(secret_path_.c_str(), 0600), 0);
  }

  void TearDown() override {
    if (sink_ == nullptr) return;
    EXPECT_OUTBOX_OK(StopCleanly(sink_.get()));
  }

  void StartSink(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--secret-file", secret_path_, "--log",
                                     log_path_,       "--seed",     "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    absl::StatusOr<std::unique_ptr<SinkProcess>> sink = SinkProcess::Start(
        testing::TargetCommand(OUTBOX_SINK_BINARY, args), dir_.path());
    ASSERT_OUTBOX_OK(sink);
    sink_ = *std::move(sink);
  }

  // POSTs `body` as webhook `id`, signed with `secret`, to `path`.
  httplib::Result Post(const std::string& path, const std::string& id,
                       const std::string& body, const char* secret = kSecret,
                       httplib::Headers extra = {}) {
    absl::StatusOr<WebhookSecret> s = ParseWebhookSecret(secret);
    EXPECT_TRUE(s.ok());
    const int64_t ts = absl::ToUnixSeconds(absl::Now());
    httplib::Headers headers = {
        {"webhook-id", id},
        {"webhook-timestamp", std::to_string(ts)},
        {"webhook-signature", Sign(*s, id, ts, body)},
        {"Idempotency-Key", id},
    };
    headers.insert(extra.begin(), extra.end());
    httplib::Client client("127.0.0.1", sink_->port());
    client.set_read_timeout(5, 0);
    return client.Post(path, headers, body, "application/json");
  }

  std::vector<std::string> Log() { return ReadLines(log_path_); }

  testing::TempDir dir_;
  std::string secret_path_ = dir_.Sub("secrets");
  std::string log_path_ = dir_.Sub("sink.jsonl");
  std::unique_ptr<SinkProcess> sink_;
};

TEST_F(SinkTest, ValidSignatureIsAcceptedAndLoggedValid) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  httplib::Result res = Post("/hooks/orders", "msg_1", R"({"total":12})");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  std::vector<std::string> log = Log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(JsonField(log[0], "id"), "\"msg_1\"");
  EXPECT_EQ(JsonField(log[0], "signature_valid"), "true");
  EXPECT_EQ(JsonField(log[0], "duplicate"), "false");
  EXPECT_EQ(JsonField(log[0], "status"), "200");
  EXPECT_EQ(JsonField(log[0], "idempotency_key"), "\"msg_1\"");
  EXPECT_EQ(JsonField(log[0], "content_type"), "\"application/json\"");
  EXPECT_EQ(JsonField(log[0], "path"), "\"/hooks/orders\"");
  EXPECT_EQ(JsonField(log[0], "body"), R"("{\"total\":12}")");
}

TEST_F(SinkTest, WrongSecretIsRejectedAndLoggedInvalid) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  httplib::Result res = Post("/hooks", "msg_1", "{}", kWrongSecret);
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 401);
  std::vector<std::string> log = Log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(JsonField(log[0], "signature_valid"), "false");
}

TEST_F(SinkTest, EitherRotatedSecretIsAccepted) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  ASSERT_TRUE(Post("/hooks", "msg_old", "{}", kSecret));
  ASSERT_TRUE(Post("/hooks", "msg_new", "{}", kRotatedSecret));
  std::vector<std::string> log = Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(JsonField(log[0], "signature_valid"), "true");
  EXPECT_EQ(JsonField(log[1], "signature_valid"), "true");
}

TEST_F(SinkTest, RedeliveryOfAnAnsweredIdIsFlaggedDuplicate) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  ASSERT_TRUE(Post("/hooks", "msg_1", "{}"));
  ASSERT_TRUE(Post("/hooks", "msg_2", "{}"));
  httplib::Result again = Post("/hooks", "msg_1", "{}");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  std::vector<std::string> log = Log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(JsonField(log[1], "duplicate"), "false");
  EXPECT_EQ(JsonField(log[2], "duplicate"), "true");
  EXPECT_EQ(JsonField(log[2], "seq"), "3");
}

TEST_F(SinkTest, StatusPathAnswersThatStatus) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  httplib::Result res = Post("/status/410", "msg_1", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 410);
  EXPECT_EQ(JsonField(Log().at(0), "status"), "410");
}

TEST_F(SinkTest, StatusForTypeMatchesTheTypeHeader) {
  ASSERT_NO_FATAL_FAILURE(StartSink({"--status-for-type", "order.voided=422"}));
  httplib::Result voided = Post("/hooks", "msg_1", "{}", kSecret,
                                {{"x-event-type", "order.voided"}});
  httplib::Result created = Post("/hooks", "msg_2", "{}", kSecret,
                                 {{"x-event-type", "order.created"}});
  ASSERT_TRUE(voided);
  ASSERT_TRUE(created);
  EXPECT_EQ(voided->status, 422);
  EXPECT_EQ(created->status, 200);
}

TEST_F(SinkTest, ThrottleAnswers429WithRetryAfter) {
  ASSERT_NO_FATAL_FAILURE(
      StartSink({"--throttle-rate", "1", "--retry-after", "7"}));
  httplib::Result res = Post("/hooks", "msg_1", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Retry-After"), "7");
}

TEST_F(SinkTest, FailRateAnswersTheFailStatus) {
  ASSERT_NO_FATAL_FAILURE(
      StartSink({"--fail-rate", "1", "--fail-status", "502"}));
  httplib::Result res = Post("/hooks", "msg_1", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 502);
}

TEST_F(SinkTest, DropClosesTheConnectionWithoutAnAnswer) {
  ASSERT_NO_FATAL_FAILURE(StartSink({"--drop-rate", "1"}));
  httplib::Result res = Post("/hooks", "msg_1", "{}");
  EXPECT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::Read)
      << httplib::to_string(res.error());
  // The sink did read the request: the sent-but-not-acknowledged case.
  std::vector<std::string> log = Log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(JsonField(log[0], "action"), "\"drop\"");
  EXPECT_EQ(JsonField(log[0], "signature_valid"), "true");
}

TEST_F(SinkTest, DelayOutlastsAShortClientTimeout) {
  ASSERT_NO_FATAL_FAILURE(StartSink({"--delay-ms", "1000"}));
  httplib::Client client("127.0.0.1", sink_->port());
  client.set_read_timeout(0, 100000);  // 100 ms, a tenth of the delay.
  httplib::Result res = client.Post("/hooks", "{}", "application/json");
  EXPECT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::Read);
}

TEST_F(SinkTest, SigtermStopsWithExitCodeZero) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  absl::StatusOr<int> code = sink_->Stop();
  ASSERT_OUTBOX_OK(code);
  EXPECT_EQ(*code, 0) << sink_->Stderr();
  sink_.reset();
}

TEST_F(SinkTest, BadFlagExitsWithUsageError) {
  absl::StatusOr<ExitResult> r =
      RunToExit(OUTBOX_SINK_BINARY, dir_.path(),
                {"--port", "0", "--secret-file", secret_path_, "--log",
                 log_path_, "--fail-rate", "2"});
  ASSERT_OUTBOX_OK(r);
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r->err, "--fail-rate")) << r->err;
}

TEST_F(SinkTest, UnreadableSecretFileExitsWithUsageError) {
  absl::StatusOr<ExitResult> r =
      RunToExit(OUTBOX_SINK_BINARY, dir_.path(),
                {"--port", "0", "--secret-file", dir_.Sub("missing"), "--log",
                 log_path_});
  ASSERT_OUTBOX_OK(r);
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_TRUE(absl::StrContains(
      r->err, "secrets file " + dir_.Sub("missing") + " does not exist"))
      << r->err;
}

TEST_F(SinkTest, HelpPrintsUsageAndExitsZero) {
  absl::StatusOr<ExitResult> r =
      RunToExit(OUTBOX_SINK_BINARY, dir_.path(), {"--help"});
  ASSERT_OUTBOX_OK(r);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r->out, "--drop-rate")) << r->out;
}

}  // namespace
}  // namespace outbox::sink
