// Copyright (c) edge-outbox authors.
//
// The libcurl transport against a cpp-httplib server on 127.0.0.1: what the
// server receives and what the caller gets back, driven through fd() the
// way the agent drives it.

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "outbox/http_transport.h"
#include "tests/testing/status.h"
#include "tests/testing/transport_test_util.h"

namespace outbox {
namespace {

using ::outbox::testing::DriveUntil;
using ::outbox::testing::MakeRequest;
using ::outbox::testing::RawServer;
using ::outbox::testing::ServerThread;

std::unique_ptr<HttpTransport> NewTransport(
    const CurlTransportOptions& options = CurlTransportOptions()) {
  auto transport = NewCurlTransport(options);
  EXPECT_TRUE(transport.ok()) << transport.status();
  return transport.ok() ? std::move(*transport) : nullptr;
}

TEST(CurlTransportTest, ConcurrentRequestsCompleteThroughOneThread) {
  constexpr int kRequests = 4;
  absl::Mutex mu;
  int arrived = 0;
  httplib::Server server;
  // Each handler waits until all requests are in the server at once, which
  // happens only if the transport really sends them concurrently.
  server.Post("/events", [&](const httplib::Request&, httplib::Response& res) {
    absl::MutexLock lock(&mu);
    ++arrived;
    const bool together = mu.AwaitWithTimeout(
        absl::Condition(
            +[](int* n) { return *n >= kRequests; }, &arrived),
        absl::Seconds(30));
    res.status = together ? 200 : 500;
  });
  ServerThread thread(&server);
  auto transport = NewTransport();
  ASSERT_NE(transport, nullptr);

  for (int i = 1; i <= kRequests; ++i) {
    ASSERT_OUTBOX_OK(transport->Start(MakeRequest(i, thread.Url("/events"))));
  }
  EXPECT_EQ(transport->InFlight(), static_cast<size_t>(kRequests));
  std::vector<HttpResult> results;
  ASSERT_TRUE(DriveUntil(transport.get(), kRequests, &results));

  std::set<uint64_t> tags;
  for (const HttpResult& r : results) {
    EXPECT_OUTBOX_OK(r.transport);
    EXPECT_EQ(r.http_status, 200) << "tag " << r.tag;
    EXPECT_FALSE(r.offline);
    tags.insert(r.tag);
  }
  EXPECT_EQ(tags, (std::set<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(transport->InFlight(), 0u);
}

TEST(CurlTransportTest, HeadersAndBodyArriveExactly) {
  httplib::Request received;
  httplib::Server server;
  server.Post("/hook",
              [&](const httplib::Request& req, httplib::Response& res) {
                received = req;
                res.status = 204;
              });
  ServerThread thread(&server);
  auto transport = NewTransport();
  ASSERT_NE(transport, nullptr);

  HttpRequest request = MakeRequest(7, thread.Url("/hook"));
  // With NUL bytes, and over 1 MiB: the size from which curl 7.88 would add
  // its default Expect: 100-continue.
  request.body =
      std::string("{\"a\":1}\0\x01\xff", 10) + std::string(1 << 20, 'x');
  request.headers = {{"Content-Type", "application/json"},
                     {"webhook-id", "evt_01H"},
                     {"Authorization", "Bearer s3cret"}};
  ASSERT_OUTBOX_OK(transport->Start(request));
  std::vector<HttpResult> results;
  ASSERT_TRUE(DriveUntil(transport.get(), 1, &results));

  EXPECT_OUTBOX_OK(results[0].transport);
  EXPECT_EQ(results[0].http_status, 204);
  EXPECT_GT(results[0].elapsed, absl::ZeroDuration());
  EXPECT_EQ(received.method, "POST");
  EXPECT_EQ(received.body, request.body);
  EXPECT_EQ(received.get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(received.get_header_value("webhook-id"), "evt_01H");
  EXPECT_EQ(received.get_header_value("Authorization"), "Bearer s3cret");
  EXPECT_FALSE(received.has_header("Expect"));
}

TEST(CurlTransportTest, EmptyHeaderValueIsSentEmpty) {
  RawServer server(RawServer::Mode::kReadRequestThenReply,
                   "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  auto transport = NewTransport();
  ASSERT_NE(transport, nullptr);

  HttpRequest request =
      MakeRequest(1, absl::StrCat("http://127.0.0.1:", server.port(), "/hook"));
  request.headers = {{"X-Empty", ""}};
  ASSERT_OUTBOX_OK(transport->Start(request));
  std::vector<HttpResult> results;
  ASSERT_TRUE(DriveUntil(transport.get(), 1, &results));
  EXPECT_EQ(results[0].http_status, 200);
  const std::string wire = server.last_request();
  EXPECT_NE(wire.find("\r\nX-Empty:\r\n"), std::string::npos) << wire;
}

TEST(CurlTransportTest, NoContentTypeIsSentUnlessGiven) {
  httplib::Request received;
  httplib::Server server;
  server.Post("/hook", [&](const httplib::Request& req, httplib::Response&) {
    received = req;
  });
  ServerThread thread(&server);
  auto transport = NewTransport();
  ASSERT_NE(transport, nullptr);

  ASSERT_OUTBOX_OK(transport->Start(MakeRequest(1, thread.Url("/hook"))));
  std::vector<HttpResult> results;
  ASSERT_TRUE(DriveUntil(transport.get(), 1, &results));
  EXPECT_EQ(results[0].http_status, 200);
  EXPECT_FALSE(received.has_header("Content-Type"));
}

TEST(CurlTransportTest, SequentialRequestsReuseOneConnection) {
  absl::Mutex mu;
  std::set<int> client_ports;
  httplib::Server server;
  server.Post("/events", [&](const httplib::Request& req, httplib::Response&) {
    absl::MutexLock lock(&mu);
    client_ports.insert(req.remote_port);
  });
  ServerThread thread(&server);
  auto transport = NewTransport();
  ASSERT_NE(transport, nullptr);

  std::vector<HttpResult> results;
  for (int i = 1; i <= 3; ++i) {
    ASSERT_OUTBOX_OK(transport->Start(MakeRequest(i, thread.Url("/events"))));
    ASSERT_TRUE(DriveUntil(transport.get(), i, &results));
    EXPECT_EQ(results.back().http_status, 200);
  }
  absl::MutexLock lock(&mu);
  EXPECT_EQ(client_ports.size(), 1u) << "each request opened a connection";
}

TEST(CurlTransportTest, RetryAfterIsCaptured) {
  httplib::Server server;
  server.Post("/events", [](const httplib::Request&, httplib::Response& res) {
    res.status = 503;
    res.set_header("Retry-After", "120");
  });
  ServerThread thread(&server);
  auto transport = NewTransport();
  ASSERT_NE(transport, nullptr);

  ASSERT_OUTBOX_OK(transport->Start(MakeRequest(1, thread.Url("/events"))));
  std::vector<HttpResult> results;
  ASSERT_TRUE(DriveUntil(transport.get(), 1, &results));
  EXPECT_OUTBOX_OK(results[0].transport);
  EXPECT_FALSE(results[0].offline);
  EXPECT_EQ(results[0].http_status, 503);
  EXPECT_EQ(results[0].retry_after, "120");
}

TEST(CurlTransportTest, RedirectIsAnAnswerNotFollowed) {
  std::atomic<int> target_hits{0};
  httplib::Server server;
  server.Post("/old", [](const httplib::Request&, httplib::Response& res) {
    res.set_redirect("/new", 307);
  });
  server.Post("/new", [&](const httplib::Request&, httplib::Response&) {
    target_hits.fetch_add(1);
  });
  ServerThread thread(&server);
  auto transport = NewTransport();
  ASSERT_NE(transport, nullptr);

  ASSERT_OUTBOX_OK(transport->Start(MakeRequest(1, thread.Url("/old"))));
  std::vector<HttpResult> results;
  ASSERT_TRUE(DriveUntil(transport.get(), 1, &results));
  EXPECT_OUTBOX_OK(results[0].transport);
  EXPECT_EQ(results[0].http_status, 307);
  EXPECT_EQ(target_hits.load(), 0);
}

TEST(CurlTransportTest, LongResponseBodyIsCutAndTheStatusStands) {
  httplib::Server server;
  server.Post("/events", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(1 << 20, 'b'), "text/plain");
  });
  ServerThread thread(&server);
  CurlTransportOptions options;
  options.max_response_body_bytes = 1024;
  auto transport = NewTransport(options);
  ASSERT_NE(transport, nullptr);

  ASSERT_OUTBOX_OK(transport->Start(MakeRequest(1, thread.Url("/events"))));
  std::vector<HttpResult> results;
  ASSERT_TRUE(DriveUntil(transport.get(), 1, &results));
  EXPECT_OUTBOX_OK(results[0].transport);
  EXPECT_EQ(results[0].http_status, 200);
}

TEST(CurlTransportTest, StartBeyondMaxInFlightIsResourceExhausted) {
  absl::Notification release;
  httplib::Server server;
  server.Post("/events", [&](const httplib::Request&, httplib::Response&) {
    release.WaitForNotificationWithTimeout(absl::Seconds(30));
  });
  ServerThread thread(&server);
  CurlTransportOptions options;
  options.max_in_flight = 2;
  auto transport = NewTransport(options);
  ASSERT_NE(transport, nullptr);

  ASSERT_OUTBOX_OK(transport->Start(MakeRequest(1, thread.Url("/events"))));
  ASSERT_OUTBOX_OK(transport->Start(MakeRequest(2, thread.Url("/events"))));
  EXPECT_STATUS_CODE(transport->Start(MakeRequest(3, thread.Url("/events"))),
                     absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(transport->InFlight(), 2u);

  release.Notify();
  std::vector<HttpResult> results;
  ASSERT_TRUE(DriveUntil(transport.get(), 2, &results));
  EXPECT_OUTBOX_OK(transport->Start(MakeRequest(3, thread.Url("/events"))));
  ASSERT_TRUE(DriveUntil(transport.get(), 3, &results));
  EXPECT_EQ(results[2].tag, 3u);
  EXPECT_EQ(results[2].http_status, 200);
}

TEST(CurlTransportTest, AbandonAllCancelsRequestsInFlight) {
  absl::Notification release;
  std::atomic<int> arrived{0};
  httplib::Server server;
  server.Post("/slow", [&](const httplib::Request&, httplib::Response&) {
    arrived.fetch_add(1);
    release.WaitForNotificationWithTimeout(absl::Seconds(30));
  });
  server.Post("/fast", [](const httplib::Request&, httplib::Response&) {});
  ServerThread thread(&server);
  auto transport = NewTransport();
  ASSERT_NE(transport, nullptr);

  for (int i = 1; i <= 3; ++i) {
    ASSERT_OUTBOX_OK(transport->Start(MakeRequest(i, thread.Url("/slow"))));
  }
  std::vector<HttpResult> results;
  ASSERT_TRUE(DriveUntil(transport.get(), &results,
                         [&] { return arrived.load() == 3; }));
  ASSERT_TRUE(results.empty());

  transport->AbandonAll(&results);
  release.Notify();
  ASSERT_EQ(results.size(), 3u);
  for (const HttpResult& r : results) {
    EXPECT_STATUS_CODE(r.transport, absl::StatusCode::kCancelled);
    EXPECT_FALSE(r.offline);
  }
  EXPECT_EQ(transport->InFlight(), 0u);

  // The transport stays usable.
  results.clear();
  ASSERT_OUTBOX_OK(transport->Start(MakeRequest(4, thread.Url("/fast"))));
  ASSERT_TRUE(DriveUntil(transport.get(), 1, &results));
  EXPECT_EQ(results[0].tag, 4u);
  EXPECT_EQ(results[0].http_status, 200);
}

TEST(CurlTransportTest, InvalidRequestsAreRejectedAtStart) {
  auto transport = NewTransport();
  ASSERT_NE(transport, nullptr);
  HttpRequest not_http = MakeRequest(1, "ftp://127.0.0.1/x");
  EXPECT_STATUS_CODE(transport->Start(not_http),
                     absl::StatusCode::kInvalidArgument);
  HttpRequest no_scheme = MakeRequest(2, "127.0.0.1/x");
  EXPECT_STATUS_CODE(transport->Start(no_scheme),
                     absl::StatusCode::kInvalidArgument);
  HttpRequest injected = MakeRequest(3, "http://127.0.0.1/x");
  injected.headers = {{"X-Sig", "a\r\nX-Evil: 1"}};
  const absl::Status status = transport->Start(injected);
  EXPECT_STATUS_CODE(status, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message().find("X-Evil"), absl::string_view::npos)
      << "a header value leaked into the status: " << status;
  HttpRequest no_timeout = MakeRequest(4, "http://127.0.0.1/x");
  no_timeout.total_timeout = absl::ZeroDuration();
  EXPECT_STATUS_CODE(transport->Start(no_timeout),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(transport->InFlight(), 0u);
}

TEST(CurlTransportTest, ZeroMaxInFlightIsInvalid) {
  CurlTransportOptions options;
  options.max_in_flight = 0;
  EXPECT_STATUS_CODE(NewCurlTransport(options),
                     absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace outbox
