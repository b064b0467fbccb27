// Copyright (c) edge-outbox authors.
//
// How the libcurl transport reports requests that got no answer, and the
// offline classification: "never reached the server" (offline) versus "the
// server may have seen it" (a failed attempt). Every peer is on 127.0.0.1.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "outbox/http_transport.h"
#include "tests/testing/skip.h"
#include "tests/testing/status.h"
#include "tests/testing/transport_test_util.h"

namespace outbox {
namespace {

using ::outbox::testing::BlackHolePort;
using ::outbox::testing::MakeRequest;
using ::outbox::testing::RawServer;
using ::outbox::testing::RefusingPort;
using ::outbox::testing::SendOne;
using ::outbox::testing::ServerThread;

std::string Loopback(int port, const std::string& scheme = "http") {
  return absl::StrCat(scheme, "://127.0.0.1:", port, "/events");
}

TEST(CurlTransportFailureTest, ConnectionRefusedIsOffline) {
  RefusingPort refusing;
  const HttpResult r = SendOne(MakeRequest(1, Loopback(refusing.port())));
  EXPECT_EQ(r.tag, 1u);
  EXPECT_TRUE(r.offline) << r.transport;
  EXPECT_STATUS_CODE(r.transport, absl::StatusCode::kUnavailable);
  EXPECT_EQ(r.http_status, 0);
}

TEST(CurlTransportFailureTest, UnresolvableHostIsOffline) {
  // .invalid never resolves (RFC 6761), with or without a DNS server.
  const HttpResult r =
      SendOne(MakeRequest(1, "http://nonexistent.invalid/events"));
  EXPECT_TRUE(r.offline) << r.transport;
  EXPECT_FALSE(r.transport.ok());
}

TEST(CurlTransportFailureTest, ConnectTimeoutIsOffline) {
  BlackHolePort black_hole;
  if (black_hole.port() < 0) {
    // Linux drops a SYN to a full accept queue; a kernel that answers
    // instead leaves no way to make a connect time out on loopback.
    OUTBOX_SKIP_WITHOUT("connect-timeout",
                        "could not fill a loopback accept queue here");
  }
  HttpRequest request = MakeRequest(1, Loopback(black_hole.port()));
  request.connect_timeout = absl::Milliseconds(300);
  const HttpResult r = SendOne(request);
  EXPECT_TRUE(r.offline) << r.transport;
  EXPECT_STATUS_CODE(r.transport, absl::StatusCode::kDeadlineExceeded);
}

TEST(CurlTransportFailureTest, TlsHandshakeTimeoutIsOffline) {
  // The peer accepts TCP but never speaks TLS: the request never left.
  RawServer silent(RawServer::Mode::kSilent);
  HttpRequest request = MakeRequest(1, Loopback(silent.port(), "https"));
  request.connect_timeout = absl::Milliseconds(300);
  const HttpResult r = SendOne(request);
  EXPECT_TRUE(r.offline) << r.transport;
  EXPECT_STATUS_CODE(r.transport, absl::StatusCode::kDeadlineExceeded);
}

TEST(CurlTransportFailureTest, UnreachableProxyIsOffline) {
  RefusingPort refusing;
  HttpRequest request = MakeRequest(1, "http://example.test/events");
  request.proxy = absl::StrCat("http://127.0.0.1:", refusing.port());
  const HttpResult r = SendOne(request);
  EXPECT_TRUE(r.offline) << r.transport;
  EXPECT_STATUS_CODE(r.transport, absl::StatusCode::kUnavailable);
}

TEST(CurlTransportFailureTest, UnresolvableProxyIsOffline) {
  HttpRequest request = MakeRequest(1, "http://example.test/events");
  request.proxy = "http://proxy.nonexistent.invalid:3128";
  const HttpResult r = SendOne(request);
  EXPECT_TRUE(r.offline) << r.transport;
  EXPECT_FALSE(r.transport.ok());
}

TEST(CurlTransportFailureTest, ProxyThatCannotReachServerIsOffline) {
  RawServer proxy(RawServer::Mode::kReadRequestThenReply,
                  "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
  HttpRequest request = MakeRequest(1, "https://example.test/events");
  request.proxy = absl::StrCat("http://127.0.0.1:", proxy.port());
  const HttpResult r = SendOne(request);
  EXPECT_TRUE(r.offline) << r.transport;
  EXPECT_FALSE(r.transport.ok());
  EXPECT_EQ(r.http_status, 0) << "the proxy's 502 is not the server's answer";
}

TEST(CurlTransportFailureTest, ProxyDenyingTheTunnelIsNotOffline) {
  RawServer proxy(RawServer::Mode::kReadRequestThenReply,
                  "HTTP/1.1 407 Proxy Authentication Required\r\n"
                  "Content-Length: 0\r\n\r\n");
  HttpRequest request = MakeRequest(1, "https://example.test/events");
  request.proxy = absl::StrCat("http://127.0.0.1:", proxy.port());
  const HttpResult r = SendOne(request);
  EXPECT_FALSE(r.offline) << r.transport;
  EXPECT_FALSE(r.transport.ok());
  EXPECT_NE(r.transport.message().find("407"), absl::string_view::npos)
      << r.transport;
}

TEST(CurlTransportFailureTest, ServerClosingWithoutAnswerIsNotOffline) {
  RawServer server(RawServer::Mode::kReadRequestThenClose);
  const HttpResult r = SendOne(MakeRequest(1, Loopback(server.port())));
  EXPECT_EQ(server.requests_read(), 1);
  EXPECT_FALSE(r.offline) << r.transport;
  EXPECT_STATUS_CODE(r.transport, absl::StatusCode::kUnavailable);
  EXPECT_EQ(r.http_status, 0);
}

TEST(CurlTransportFailureTest, TimeoutAfterSendingIsNotOffline) {
  absl::Notification release;
  httplib::Server server;
  server.Post("/events", [&](const httplib::Request&, httplib::Response&) {
    release.WaitForNotificationWithTimeout(absl::Seconds(30));
  });
  ServerThread thread(&server);
  HttpRequest request = MakeRequest(1, thread.Url("/events"));
  request.total_timeout = absl::Milliseconds(300);
  const HttpResult r = SendOne(request);
  release.Notify();
  EXPECT_FALSE(r.offline) << r.transport;
  EXPECT_STATUS_CODE(r.transport, absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.http_status, 0);
}

TEST(CurlTransportFailureTest, StatusNamesTargetButNotPathOrQuery) {
  RefusingPort refusing;
  const HttpResult r = SendOne(
      MakeRequest(1, absl::StrCat(Loopback(refusing.port()), "?token=s3cret")));
  ASSERT_FALSE(r.transport.ok());
  const std::string message(r.transport.message());
  EXPECT_NE(message.find(absl::StrCat("http://127.0.0.1:", refusing.port())),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
  EXPECT_EQ(message.find("/events"), std::string::npos) << message;
}

}  // namespace
}  // namespace outbox
