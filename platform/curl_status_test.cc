// Copyright (c) edge-outbox authors.

#include "platform/curl_status.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

TEST(FromCurlTest, OkIsOk) { EXPECT_OUTBOX_OK(FromCurl(CURLE_OK, "POST x")); }

TEST(FromCurlTest, CodesSayWhatToDoNext) {
  EXPECT_STATUS_CODE(FromCurl(CURLE_COULDNT_CONNECT, "c"),
                     absl::StatusCode::kUnavailable);
  EXPECT_STATUS_CODE(FromCurl(CURLE_COULDNT_RESOLVE_HOST, "c"),
                     absl::StatusCode::kUnavailable);
  EXPECT_STATUS_CODE(FromCurl(CURLE_GOT_NOTHING, "c"),
                     absl::StatusCode::kUnavailable);
  EXPECT_STATUS_CODE(FromCurl(CURLE_OPERATION_TIMEDOUT, "c"),
                     absl::StatusCode::kDeadlineExceeded);
  EXPECT_STATUS_CODE(FromCurl(CURLE_PEER_FAILED_VERIFICATION, "c"),
                     absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(FromCurl(CURLE_SSL_CERTPROBLEM, "c"),
                     absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(FromCurl(CURLE_UNSUPPORTED_PROTOCOL, "c"),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(FromCurl(CURLE_OUT_OF_MEMORY, "c"),
                     absl::StatusCode::kResourceExhausted);
  EXPECT_STATUS_CODE(FromCurl(CURLE_BAD_FUNCTION_ARGUMENT, "c"),
                     absl::StatusCode::kInternal);
}

TEST(FromCurlTest, MessageHasContextDetailAndRemedy) {
  const absl::Status s =
      FromCurl(CURLE_PEER_FAILED_VERIFICATION, "POST https://h:443",
               "SSL certificate problem: self-signed certificate\n");
  const std::string m(s.message());
  EXPECT_EQ(m.rfind("POST https://h:443: ", 0), 0u) << m;
  EXPECT_NE(m.find("(SSL certificate problem: self-signed certificate)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("TlsOptions::ca_file"), std::string::npos) << m;
}

TEST(FromCurlTest, MissingClientCertificateAlertNamesTheFix) {
  const absl::Status s =
      FromCurl(CURLE_RECV_ERROR, "POST https://h:443",
               "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert "
               "certificate required, errno 0");
  EXPECT_STATUS_CODE(s, absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("client_cert_file"), absl::string_view::npos) << s;
}

TEST(FromCurlMultiTest, OutOfMemoryIsResourceExhausted) {
  EXPECT_OUTBOX_OK(FromCurlMulti(CURLM_OK, "c"));
  EXPECT_STATUS_CODE(FromCurlMulti(CURLM_OUT_OF_MEMORY, "c"),
                     absl::StatusCode::kResourceExhausted);
  EXPECT_STATUS_CODE(FromCurlMulti(CURLM_BAD_EASY_HANDLE, "c"),
                     absl::StatusCode::kInternal);
}

TransferFacts Facts(CURLcode code, bool sent = false) {
  TransferFacts facts;
  facts.code = code;
  facts.request_sent = sent;
  return facts;
}

TEST(NeverReachedServerTest, ResolveAndConnectFailuresAreOffline) {
  EXPECT_TRUE(NeverReachedServer(Facts(CURLE_COULDNT_RESOLVE_HOST)));
  EXPECT_TRUE(NeverReachedServer(Facts(CURLE_COULDNT_RESOLVE_PROXY)));
  EXPECT_TRUE(NeverReachedServer(Facts(CURLE_COULDNT_CONNECT)));
}

TEST(NeverReachedServerTest, TimeoutIsOfflineOnlyBeforeSending) {
  EXPECT_TRUE(NeverReachedServer(Facts(CURLE_OPERATION_TIMEDOUT, false)));
  EXPECT_FALSE(NeverReachedServer(Facts(CURLE_OPERATION_TIMEDOUT, true)));
}

TEST(NeverReachedServerTest, PeerReachedIsNotOffline) {
  EXPECT_FALSE(NeverReachedServer(Facts(CURLE_PEER_FAILED_VERIFICATION)));
  EXPECT_FALSE(NeverReachedServer(Facts(CURLE_SSL_CONNECT_ERROR)));
  EXPECT_FALSE(NeverReachedServer(Facts(CURLE_GOT_NOTHING, true)));
  EXPECT_FALSE(NeverReachedServer(Facts(CURLE_RECV_ERROR, true)));
  EXPECT_FALSE(NeverReachedServer(Facts(CURLE_SEND_ERROR, true)));
  EXPECT_FALSE(NeverReachedServer(Facts(CURLE_OK, true)));
}

TEST(NeverReachedServerTest, AnswerIsNeverOffline) {
  TransferFacts facts = Facts(CURLE_OPERATION_TIMEDOUT);
  facts.response_received = true;
  EXPECT_FALSE(NeverReachedServer(facts));
}

TEST(NeverReachedServerTest, ProxyFailingToReachServerIsOffline) {
  TransferFacts tunnel = Facts(CURLE_RECV_ERROR, true);
  tunnel.proxy_connect_code = 503;
  EXPECT_TRUE(NeverReachedServer(tunnel));
  tunnel.proxy_connect_code = 407;
  EXPECT_FALSE(NeverReachedServer(tunnel));

  TransferFacts socks = Facts(CURLE_PROXY);
  socks.proxy_error = CURLPX_REPLY_HOST_UNREACHABLE;
  EXPECT_TRUE(NeverReachedServer(socks));
  socks.proxy_error = CURLPX_NO_AUTH;
  EXPECT_FALSE(NeverReachedServer(socks));
}

}  // namespace
}  // namespace outbox
