// Copyright (c) edge-outbox authors.
//
// outbox-sink over HTTPS. The suite makes its own CA and a server
// certificate for 127.0.0.1 with the openssl command-line tool, so a client
// that trusts that CA must succeed and one that does not must fail.

#include <httplib.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_certs.h"
#include "tools/json_fields.h"
#include "webhooks/signature.h"

namespace outbox::sink {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

class SinkTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    certs_status_ =
        new absl::Status(testing::MakeTestCerts(dir_->path(), &certs_));
  }

  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
    delete certs_status_;
    certs_status_ = nullptr;
  }

  void SetUp() override {
    ASSERT_OUTBOX_OK(*certs_status_);
    std::ofstream(secret_path_) << kSecret << "\n";
    ASSERT_EQ(chmod(secret_path_.c_str(), 0600), 0);
    absl::StatusOr<std::unique_ptr<SinkProcess>> sink = SinkProcess::Start(
        testing::TargetCommand(
            OUTBOX_SINK_BINARY,
            {"--secret-file", secret_path_, "--log", log_path_, "--tls-cert",
             certs_.server_cert, "--tls-key", certs_.server_key}),
        work_.path());
    ASSERT_OUTBOX_OK(sink);
    sink_ = *std::move(sink);
  }

  void TearDown() override {
    if (sink_ == nullptr) return;
    EXPECT_OUTBOX_OK(StopCleanly(sink_.get()));
  }

  httplib::Result SignedPost(httplib::SSLClient& client,
                             const std::string& id) {
    absl::StatusOr<WebhookSecret> s = ParseWebhookSecret(kSecret);
    EXPECT_TRUE(s.ok());
    const int64_t ts = absl::ToUnixSeconds(absl::Now());
    const std::string body = R"({"tls":true})";
    return client.Post("/hooks",
                       {{"webhook-id", id},
                        {"webhook-timestamp", std::to_string(ts)},
                        {"webhook-signature", Sign(*s, id, ts, body)}},
                       body, "application/json");
  }

  static testing::TempDir* dir_;
  static testing::TestCerts certs_;
  static absl::Status* certs_status_;
  testing::TempDir work_;
  std::string secret_path_ = work_.Sub("secrets");
  std::string log_path_ = work_.Sub("sink.jsonl");
  std::unique_ptr<SinkProcess> sink_;
};

testing::TempDir* SinkTlsTest::dir_ = nullptr;
testing::TestCerts SinkTlsTest::certs_;
absl::Status* SinkTlsTest::certs_status_ = nullptr;

TEST_F(SinkTlsTest, ClientTrustingTheTestCaSucceeds) {
  httplib::SSLClient client("127.0.0.1", sink_->port());
  client.set_ca_cert_path(certs_.ca_cert.c_str());
  client.enable_server_certificate_verification(true);
  httplib::Result res = SignedPost(client, "msg_tls");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  std::vector<std::string> log = ReadLines(log_path_);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(JsonField(log[0], "signature_valid"), "true");
}

TEST_F(SinkTlsTest, ClientWithoutTheTestCaFailsVerification) {
  httplib::SSLClient client("127.0.0.1", sink_->port());
  client.enable_server_certificate_verification(true);
  httplib::Result res = SignedPost(client, "msg_tls");
  EXPECT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::SSLServerVerification)
      << httplib::to_string(res.error());
  EXPECT_NE(client.get_openssl_verify_result(), 0);  // X509_V_OK is 0.
  EXPECT_TRUE(ReadLines(log_path_).empty());
}

}  // namespace
}  // namespace outbox::sink
