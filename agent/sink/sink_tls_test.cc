// Copyright (c) edge-outbox authors.
//
// outbox-sink over HTTPS. The suite makes its own CA and a server
// certificate for 127.0.0.1 with the openssl command-line tool, so a client
// that trusts that CA must succeed and one that does not must fail.

#include <httplib.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/sink/sink_process.h"
#include "agent/webhook_signature.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::sink {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

// Runs a shell command, its output going to `log`; true if it exited 0.
bool Shell(const std::string& command, const std::string& log) {
  return std::system(absl::StrCat(command, " >>", log, " 2>&1").c_str()) == 0;
}

class SinkTlsTest : public ::testing::Test {
 protected:
  // P-256 keys: generating them is instant, unlike RSA.
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    const std::string d = dir_->path();
    const std::string log = d + "/openssl.log";
    std::ofstream(d + "/server.ext")
        << "basicConstraints=CA:FALSE\n"
        << "keyUsage=digitalSignature\n"
        << "extendedKeyUsage=serverAuth\n"
        << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1";
    ok_ = Shell(absl::StrCat("openssl req -x509 ", ec, " -nodes -days 2",
                             " -subj '/CN=outbox-sink test CA'", " -keyout ", d,
                             "/ca.key -out ", d, "/ca.pem"),
                log) &&
          Shell(absl::StrCat("openssl req ", ec, " -nodes -subj /CN=127.0.0.1",
                             " -keyout ", d, "/server.key -out ", d,
                             "/server.csr"),
                log) &&
          Shell(absl::StrCat("openssl x509 -req -in ", d, "/server.csr -CA ", d,
                             "/ca.pem -CAkey ", d,
                             "/ca.key -set_serial 2 -days 2 -extfile ", d,
                             "/server.ext -out ", d, "/server.pem"),
                log);
    if (!ok_) {
      std::ifstream in(log);
      openssl_output_.assign(std::istreambuf_iterator<char>(in), {});
    }
  }

  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(ok_) << "openssl failed:\n" << openssl_output_;
    std::ofstream(secret_path_) << kSecret << "\n";
    absl::StatusOr<std::unique_ptr<SinkProcess>> sink = SinkProcess::Start(
        OUTBOX_SINK_BINARY, work_.path(),
        {"--secret-file", secret_path_, "--log", log_path_, "--tls-cert",
         Cert("server.pem"), "--tls-key", Cert("server.key")});
    ASSERT_OUTBOX_OK(sink);
    sink_ = *std::move(sink);
  }

  void TearDown() override {
    if (sink_ == nullptr) return;
    absl::StatusOr<int> code = sink_->Stop();
    ASSERT_OUTBOX_OK(code);
    EXPECT_EQ(*code, 0) << sink_->Stderr();
  }

  static std::string Cert(const std::string& name) { return dir_->Sub(name); }

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
  static bool ok_;
  static std::string openssl_output_;
  testing::TempDir work_;
  std::string secret_path_ = work_.Sub("secrets");
  std::string log_path_ = work_.Sub("sink.jsonl");
  std::unique_ptr<SinkProcess> sink_;
};

testing::TempDir* SinkTlsTest::dir_ = nullptr;
bool SinkTlsTest::ok_ = false;
std::string SinkTlsTest::openssl_output_;

TEST_F(SinkTlsTest, ClientTrustingTheTestCaSucceeds) {
  httplib::SSLClient client("127.0.0.1", sink_->port());
  client.set_ca_cert_path(Cert("ca.pem").c_str());
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
