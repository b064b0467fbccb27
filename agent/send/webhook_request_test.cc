// Copyright (c) edge-outbox authors.
//
// The webhook request without sockets: every header of the header table in
// docs/transports.md through BuildRequest().

#include "agent/send/webhook_request.h"

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/config/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/events.h"
#include "tests/testing/request_headers.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "webhooks/signature.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);  // 2026-01-01

// A sale committed an hour ago, not tried yet.
PendingEvent SaleEvent() {
  return testing::MakePendingSale(kNow - absl::Hours(1));
}

Destination PlainDestination() {
  Destination d;
  d.name = "backend";
  d.url = "https://api.example.com/webhooks";
  return d;
}

// --- BuildRequest: the header table ---------------------------------------

TEST(BuildRequestTest, ContentTypeIsTheEventsOwn) {
  PendingEvent e = SaleEvent();
  e.content_type = "text/csv; charset=utf-8";
  const HttpRequest r = BuildRequest(e, PlainDestination(), kNow, 1);
  EXPECT_THAT(testing::HeaderValues(r, "Content-Type"),
              ElementsAre("text/csv; charset=utf-8"));
}

TEST(BuildRequestTest, ContentTypeOfAnEventEmittedWithTheDefaultIsJson) {
  PendingEvent e = SaleEvent();
  e.content_type = Event().content_type;
  const HttpRequest r = BuildRequest(e, PlainDestination(), kNow, 1);
  EXPECT_THAT(testing::HeaderValues(r, "Content-Type"),
              ElementsAre("application/json"));
}

TEST(BuildRequestTest, EmptyContentTypeIsSentAsOctetStream) {
  PendingEvent e = SaleEvent();
  e.content_type.clear();
  const HttpRequest r = BuildRequest(e, PlainDestination(), kNow, 1);
  EXPECT_THAT(testing::HeaderValues(r, "Content-Type"),
              ElementsAre("application/octet-stream"));
}

TEST(BuildRequestTest, WebhookIdIsTheEventId) {
  const HttpRequest r = BuildRequest(SaleEvent(), PlainDestination(), kNow, 1);
  EXPECT_THAT(testing::HeaderValues(r, "webhook-id"),
              ElementsAre(SaleEvent().id));
}

TEST(BuildRequestTest, WebhookTimestampIsTheTimeOfThisAttempt) {
  const absl::Time retry_time = kNow + absl::Minutes(42);
  const HttpRequest r =
      BuildRequest(SaleEvent(), PlainDestination(), retry_time, 1);
  EXPECT_THAT(testing::HeaderValues(r, "webhook-timestamp"),
              ElementsAre(absl::StrCat(absl::ToUnixSeconds(retry_time))));
}

TEST(BuildRequestTest, SignatureHasOneVerifiableEntryPerSecret) {
  Destination d = PlainDestination();
  d.secrets = {WebhookSecret("first-key-0123456789abcdef"),
               WebhookSecret("second-key-0123456789abcdef")};
  const PendingEvent e = SaleEvent();
  const HttpRequest r = BuildRequest(e, d, kNow, 1);
  const std::vector<std::string> header =
      testing::HeaderValues(r, "webhook-signature");
  ASSERT_EQ(header.size(), 1u);
  const std::vector<std::string> entries = absl::StrSplit(header[0], ' ');
  ASSERT_EQ(entries.size(), d.secrets.size()) << header[0];
  int64_t timestamp = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      testing::HeaderValues(r, "webhook-timestamp").at(0), &timestamp));
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_TRUE(absl::StartsWith(entries[i], "v1,")) << entries[i];
    EXPECT_TRUE(
        VerifySignature({d.secrets[i]}, e.id, timestamp, e.payload, entries[i]))
        << "entry " << i << " does not verify with secret " << i;
  }
  EXPECT_FALSE(VerifySignature({WebhookSecret("another-key")}, e.id, timestamp,
                               e.payload, header[0]));
}

TEST(BuildRequestTest, NoSignatureHeaderWithoutSecrets) {
  const HttpRequest r = BuildRequest(SaleEvent(), PlainDestination(), kNow, 1);
  EXPECT_TRUE(testing::HeaderValues(r, "webhook-signature").empty());
}

TEST(BuildRequestTest, IdempotencyKeyIsTheEventId) {
  const HttpRequest r = BuildRequest(SaleEvent(), PlainDestination(), kNow, 1);
  EXPECT_THAT(testing::HeaderValues(r, "Idempotency-Key"),
              ElementsAre(SaleEvent().id));
}

TEST(BuildRequestTest, EventTypeHeaderIsTheEventType) {
  const HttpRequest r = BuildRequest(SaleEvent(), PlainDestination(), kNow, 1);
  EXPECT_THAT(testing::HeaderValues(r, "x-event-type"),
              ElementsAre("sale.created"));
}

TEST(BuildRequestTest, ConfiguredHeadersInlineAndFromFilesAreSent) {
  testing::TempDir dir;
  const std::string auth = dir.Sub("backend.auth");
  std::ofstream(auth) << "Bearer token-from-file\n";
  ASSERT_EQ(chmod(auth.c_str(), 0600), 0);
  absl::StatusOr<AgentConfig> config =
      ParseAgentConfig(absl::StrCat(R"(destinations {
        name: "backend"
        url: "https://api.example.com/webhooks"
        headers { key: "X-Device" value: "till-07" }
        header_files { key: "Authorization" value: ")",
                                    auth, R"(" }
      })"),
                       dir.Sub("agent.textproto"));
  ASSERT_OUTBOX_OK(config);
  const HttpRequest r =
      BuildRequest(SaleEvent(), config->destinations[0], kNow, 1);
  EXPECT_THAT(testing::HeaderValues(r, "X-Device"), ElementsAre("till-07"));
  EXPECT_THAT(testing::HeaderValues(r, "Authorization"),
              ElementsAre("Bearer token-from-file"));
}

TEST(BuildRequestTest, CarriesTheBodyAndTheDestinationsConnectionSettings) {
  Destination d = PlainDestination();
  d.connect_timeout = absl::Seconds(3);
  d.timeout = absl::Seconds(17);
  d.tls.ca_file = "/etc/outbox/ca.pem";
  d.proxy = "http://proxy.local:3128";
  const HttpRequest r = BuildRequest(SaleEvent(), d, kNow, 99);
  EXPECT_EQ(r.tag, 99u);
  EXPECT_EQ(r.url, d.url);
  EXPECT_EQ(r.body, SaleEvent().payload);
  EXPECT_EQ(r.connect_timeout, absl::Seconds(3));
  EXPECT_EQ(r.total_timeout, absl::Seconds(17));
  EXPECT_EQ(r.tls.ca_file, "/etc/outbox/ca.pem");
  EXPECT_EQ(r.proxy, "http://proxy.local:3128");
}

}  // namespace
}  // namespace outbox
