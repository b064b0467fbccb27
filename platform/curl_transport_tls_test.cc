// Copyright (c) edge-outbox authors.
//
// HTTPS through the libcurl transport against a cpp-httplib SSLServer whose
// certificate is signed by a CA made for the test: verification is on by
// default, fails with an actionable status, and mutual TLS works.

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "outbox/http_transport.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/transport_test_util.h"

namespace outbox {
namespace {

using ::outbox::testing::DriveUntil;
using ::outbox::testing::MakeRequest;
using ::outbox::testing::ServerThread;
using ::outbox::testing::TestCerts;

class CurlTransportTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OUTBOX_OK(outbox::testing::MakeTestCerts(dir_.path(), &certs_));
  }

  // Starts an HTTPS server on 127.0.0.1 with the certificate for that
  // address; with `require_client_cert` it accepts only clients presenting a
  // certificate signed by the test CA.
  void StartServer(bool require_client_cert = false) {
    StartServerWith(certs_.server_cert, certs_.server_key, require_client_cert);
  }
  void StartServerWith(const std::string& cert, const std::string& key,
                       bool require_client_cert = false) {
    server_ = std::make_unique<httplib::SSLServer>(
        cert.c_str(), key.c_str(),
        require_client_cert ? certs_.ca_cert.c_str() : nullptr);
    ASSERT_TRUE(server_->is_valid());
    server_->Post("/events", [](const httplib::Request&,
                                httplib::Response& res) { res.status = 202; });
    thread_ = std::make_unique<ServerThread>(server_.get());
  }

  HttpResult Send(const TlsOptions& tls) {
    auto transport = NewCurlTransport();
    EXPECT_TRUE(transport.ok()) << transport.status();
    if (!transport.ok()) return HttpResult();
    HttpRequest request = MakeRequest(1, thread_->Url("/events", true));
    request.tls = tls;
    EXPECT_OUTBOX_OK((*transport)->Start(request));
    std::vector<HttpResult> results;
    EXPECT_TRUE(DriveUntil(transport->get(), 1, &results));
    return results.empty() ? HttpResult() : results[0];
  }

  outbox::testing::TempDir dir_;
  TestCerts certs_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::unique_ptr<ServerThread> thread_;  // stops before server_ dies
};

TEST_F(CurlTransportTlsTest, TrustedCaFileVerifies) {
  StartServer();
  TlsOptions tls;
  tls.ca_file = certs_.ca_cert;
  const HttpResult r = Send(tls);
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.http_status, 202);
}

TEST_F(CurlTransportTlsTest, UnknownCaFailsWithActionableStatus) {
  StartServer();
  const HttpResult r = Send(TlsOptions());  // system CAs only
  EXPECT_STATUS_CODE(r.transport, absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(r.offline) << "a peer answered; it is not trusted";
  EXPECT_EQ(r.http_status, 0);
  const std::string message(r.transport.message());
  EXPECT_NE(message.find("certificate"), std::string::npos) << message;
  EXPECT_NE(message.find("ca_file"), std::string::npos) << message;
}

// The trusted CA signed it, but for another host: only the host-name check
// (CURLOPT_SSL_VERIFYHOST) stands between the client and an impostor
// holding any certificate of that CA.
TEST_F(CurlTransportTlsTest, CertificateForAnotherHostFailsVerification) {
  StartServerWith(certs_.other_host_cert, certs_.other_host_key);
  TlsOptions tls;
  tls.ca_file = certs_.ca_cert;
  const HttpResult r = Send(tls);
  EXPECT_STATUS_CODE(r.transport, absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(r.offline);
  EXPECT_EQ(r.http_status, 0);
  const std::string message(r.transport.message());
  EXPECT_NE(message.find("does not match the host"), std::string::npos)
      << message;
}

// The same certificate passes with the host check alone turned off: the
// failure above is the name, not the chain.
TEST_F(CurlTransportTlsTest, CertificateForAnotherHostPassesTheChainCheck) {
  StartServerWith(certs_.other_host_cert, certs_.other_host_key);
  TlsOptions tls;
  tls.ca_file = certs_.ca_cert;
  tls.verify_host = false;
  const HttpResult r = Send(tls);
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.http_status, 202);
}

TEST_F(CurlTransportTlsTest, VerificationCanBeTurnedOffExplicitly) {
  StartServer();
  TlsOptions tls;
  tls.verify_peer = false;
  tls.verify_host = false;
  const HttpResult r = Send(tls);
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.http_status, 202);
}

TEST_F(CurlTransportTlsTest, MissingCaFileIsFailedPrecondition) {
  StartServer();
  TlsOptions tls;
  tls.ca_file = dir_.Sub("no-such-ca.pem");
  const HttpResult r = Send(tls);
  EXPECT_STATUS_CODE(r.transport, absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.transport.message().find("ca_file"), absl::string_view::npos)
      << r.transport;
}

TEST_F(CurlTransportTlsTest, ClientCertificateIsPresented) {
  StartServer(/*require_client_cert=*/true);
  TlsOptions tls;
  tls.ca_file = certs_.ca_cert;
  tls.client_cert_file = certs_.client_cert;
  tls.client_key_file = certs_.client_key;
  const HttpResult r = Send(tls);
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.http_status, 202);
}

TEST_F(CurlTransportTlsTest, MissingClientCertificateIsRefused) {
  StartServer(/*require_client_cert=*/true);
  TlsOptions tls;
  tls.ca_file = certs_.ca_cert;
  const HttpResult r = Send(tls);
  // Under TLS 1.3 the refusal comes after the handshake, racing the
  // request: curl reports the alert (kFailedPrecondition, see FromCurl) or
  // a broken connection (kUnavailable). Either way: no answer, not offline.
  EXPECT_FALSE(r.transport.ok());
  EXPECT_FALSE(r.offline) << r.transport;
  EXPECT_EQ(r.http_status, 0);
}

}  // namespace
}  // namespace outbox
