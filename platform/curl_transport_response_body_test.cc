// Copyright (c) edge-outbox authors.
//
// Response bodies through the libcurl transport (HttpRequest::
// max_response_body): what comes back, where it is cut, and that nothing
// comes back unless asked for. Servers are on 127.0.0.1.

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "outbox/http_transport.h"
#include "tests/testing/status.h"
#include "tests/testing/transport_test_util.h"

namespace outbox {
namespace {

using ::outbox::testing::MakeRequest;
using ::outbox::testing::RawServer;
using ::outbox::testing::SendOne;
using ::outbox::testing::ServerThread;

// "0123456789012...", `length` bytes: a cut shows where it was made.
std::string Digits(size_t length) {
  std::string digits(length, '0');
  for (size_t i = 0; i < length; ++i)
    digits[i] = static_cast<char>('0' + i % 10);
  return digits;
}

// Sends a request keeping up to `max_response_body` bytes to a server that
// answers 201 with `answer`.
HttpResult SendForAnswer(
    const std::string& answer, size_t max_response_body,
    const CurlTransportOptions& options = CurlTransportOptions()) {
  httplib::Server server;
  server.Post("/reserve", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 201;
    res.set_content(answer, "application/json");
  });
  ServerThread thread(&server);
  HttpRequest request = MakeRequest(1, thread.Url("/reserve"));
  request.max_response_body = max_response_body;
  return SendOne(request, options);
}

TEST(CurlTransportResponseBodyTest, BodyIsReturned) {
  const std::string answer = R"({"reservationId":"RES-1"})";
  const HttpResult r = SendForAnswer(answer, 4096);
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.http_status, 201);
  EXPECT_EQ(r.body, answer);
  EXPECT_FALSE(r.body_truncated);
}

TEST(CurlTransportResponseBodyTest, BodyLongerThanTheMaximumIsCutAndFlagged) {
  const HttpResult r = SendForAnswer(Digits(100000), 1000);
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.http_status, 201);
  EXPECT_EQ(r.body, Digits(1000));
  EXPECT_TRUE(r.body_truncated);
}

TEST(CurlTransportResponseBodyTest, BodyOfExactlyTheMaximumIsWhole) {
  const HttpResult r = SendForAnswer(Digits(1000), 1000);
  EXPECT_EQ(r.body, Digits(1000));
  EXPECT_FALSE(r.body_truncated);
}

TEST(CurlTransportResponseBodyTest, ZeroMaximumReturnsNoBody) {
  const HttpResult r = SendForAnswer(R"({"reservationId":"RES-1"})", 0);
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.http_status, 201);
  EXPECT_EQ(r.body, "");
  EXPECT_FALSE(r.body_truncated);
}

TEST(CurlTransportResponseBodyTest, MaximumAboveTheReadLimitRaisesIt) {
  CurlTransportOptions options;
  options.max_response_body_bytes = 1024;
  // Longer than curl's 16 KiB buffer: it arrives in several pieces.
  const HttpResult r = SendForAnswer(Digits(100000), 200000, options);
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.body, Digits(100000));
  EXPECT_FALSE(r.body_truncated);
}

// Sends a request keeping up to 4 KiB to a raw server that answers `reply`
// (bytes as they go on the wire) and closes.
HttpResult SendForRawReply(const std::string& reply) {
  RawServer server(RawServer::Mode::kReadRequestThenReply, reply);
  HttpRequest request =
      MakeRequest(1, absl::StrCat("http://127.0.0.1:", server.port(), "/r"));
  request.max_response_body = 4096;
  return SendOne(request);
}

TEST(CurlTransportResponseBodyTest, BodyCutShortByTheServerKeepsWhatArrived) {
  const HttpResult r = SendForRawReply(
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"reserv");
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.body, "{\"reserv");
  EXPECT_FALSE(r.body_truncated);
}

TEST(CurlTransportResponseBodyTest, InterimResponseIsNotTheBody) {
  const HttpResult r = SendForRawReply(
      "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.body, "ok");
}

}  // namespace
}  // namespace outbox
