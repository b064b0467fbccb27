// Copyright (c) edge-outbox authors.
//
// The request methods of the libcurl transport: each allowed one reaches a
// cpp-httplib server on 127.0.0.1 as itself, body included; any other is
// refused before anything is sent.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "outbox/http_transport.h"
#include "tests/testing/status.h"
#include "tests/testing/transport_test_util.h"

namespace outbox {
namespace {

using ::outbox::testing::MakeRequest;
using ::outbox::testing::RefusingPort;
using ::outbox::testing::SendOne;
using ::outbox::testing::ServerThread;

class CurlTransportAllowedMethodTest
    : public ::testing::TestWithParam<std::string> {};

TEST_P(CurlTransportAllowedMethodTest, ArrivesAsItselfWithItsBody) {
  absl::Mutex mu;
  httplib::Request received;
  httplib::Server server;
  const auto record = [&](const httplib::Request& req, httplib::Response&) {
    absl::MutexLock lock(&mu);
    received = req;
  };
  server.Post("/r", record);
  server.Put("/r", record);
  server.Patch("/r", record);
  server.Delete("/r", record);
  ServerThread thread(&server);

  HttpRequest request = MakeRequest(1, thread.Url("/r"));
  request.method = GetParam();
  // With NUL bytes, and over 1 MiB: the size from which curl 7.88 would add
  // its Expect: 100-continue.
  request.body =
      std::string("{\"id\":\"RES-1\"}\0\xff", 16) + std::string(1 << 20, 'x');
  const HttpResult r = SendOne(request);
  EXPECT_OUTBOX_OK(r.transport);
  EXPECT_EQ(r.http_status, 200);
  absl::MutexLock lock(&mu);
  EXPECT_EQ(received.method, GetParam());
  EXPECT_EQ(received.body, request.body);
  EXPECT_FALSE(received.has_header("Expect"));
}

INSTANTIATE_TEST_SUITE_P(Methods, CurlTransportAllowedMethodTest,
                         ::testing::Values("POST", "PUT", "PATCH", "DELETE"));

TEST(CurlTransportMethodTest, OtherMethodsAreInvalidArgument) {
  auto transport = NewCurlTransport();
  ASSERT_TRUE(transport.ok()) << transport.status();
  for (const char* method : {"GET", "HEAD", "delete", "Put", "", "POST "}) {
    HttpRequest request = MakeRequest(1, "http://127.0.0.1:1/r");
    request.method = method;
    const absl::Status status = (*transport)->Start(request);
    EXPECT_STATUS_CODE(status, absl::StatusCode::kInvalidArgument);
    const std::string message(status.message());
    EXPECT_NE(message.find(absl::StrCat("'", method, "'")), std::string::npos)
        << message;
    EXPECT_NE(message.find("POST, PUT, PATCH or DELETE"), std::string::npos)
        << message;
  }
  EXPECT_EQ((*transport)->InFlight(), 0u);
}

TEST(CurlTransportMethodTest, StatusNamesTheMethodSent) {
  RefusingPort refusing;
  HttpRequest request =
      MakeRequest(1, absl::StrCat("http://127.0.0.1:", refusing.port(), "/r"));
  request.method = "DELETE";
  const HttpResult r = SendOne(request);
  ASSERT_FALSE(r.transport.ok());
  const std::string message(r.transport.message());
  EXPECT_EQ(
      message.rfind(
          absl::StrCat("DELETE http://127.0.0.1:", refusing.port(), ": "), 0),
      0u)
      << message;
}

}  // namespace
}  // namespace outbox
