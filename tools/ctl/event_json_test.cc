// Copyright (c) edge-outbox authors.
//
// outboxctl's --json forms of events, byte for byte: scripts parse them, so
// member names, their order and how stored bytes are encoded must not drift.

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tools/ctl/event_format.h"
#include "tools/json_bytes.h"

namespace outbox::ctl {
namespace {

// A pending event after three failed attempts, with bytes a terminal would
// act on in its type, a payload full of escapes and an ordering key that is
// not UTF-8.
PendingEvent AwkwardEvent() {
  PendingEvent e;
  e.seq = 42;
  e.id = "0190aaaa-0000-7000-8000-000000000001";
  e.type = "evil\x1b[2J\xC2\x9B";
  e.payload = "line1\nline2\t\x01\"\\ caf\xC3\xA9 /";
  e.content_type = "text/plain";
  e.ordering_key = std::string("k\xff\x00", 3);
  e.idempotency_key = "order-42";
  e.created = absl::FromUnixMillis(1767225600123);
  e.next_attempt = absl::FromUnixMillis(1767225660000);
  e.attempts = 3;
  e.first_attempt = absl::FromUnixMillis(1767225601000);
  e.last_error = "HTTP 503";
  e.last_http_status = 503;
  return e;
}

constexpr char kMembers[] =
    R"("id":"0190aaaa-0000-7000-8000-000000000001","seq":42,)"
    "\"type\":\"evil\\u001b[2J\xC2\x9B\","
    R"("content_type":"text/plain","ordering_key_base64":"a/8A",)"
    R"("destination":"","idempotency_key":"order-42",)"
    R"("created":"2026-01-01T00:00:00.123Z","created_unix_ms":1767225600123,)"
    R"("attempts":3,)";

TEST(CtlEventJsonTest, PendingEventWithPayloadIsStable) {
  EXPECT_EQ(DumpJson(PendingJson(AwkwardEvent(), /*with_payload=*/true)),
            std::string(R"({"state":"pending",)") + kMembers +
                R"("first_attempt":"2026-01-01T00:00:01.000Z",)"
                R"("first_attempt_unix_ms":1767225601000,)"
                R"("last_error":"HTTP 503","last_http_status":503,)"
                R"("payload_bytes":23,)"
                "\"payload\":\"line1\\nline2\\t\\u0001\\\"\\\\ caf\xC3\xA9 /\","
                R"("next_attempt":"2026-01-01T00:01:00.000Z",)"
                R"("next_attempt_unix_ms":1767225660000})");
}

TEST(CtlEventJsonTest, ListFormLeavesThePayloadOut) {
  const std::string json =
      DumpJson(PendingJson(AwkwardEvent(), /*with_payload=*/false));
  EXPECT_EQ(json.find("payload"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("last_http_status":503,"next_attempt":)"),
            std::string::npos)
      << json;
}

TEST(CtlEventJsonTest, DeadLetterHasNullTimesForNoAttemptAndBase64Payload) {
  DeadLetter d;
  d.event = AwkwardEvent();
  d.event.payload = std::string("\xFF\x00\x01", 3);
  d.event.first_attempt = absl::InfinitePast();
  d.event.last_http_status = 0;
  d.reason = "max attempts reached";
  d.dead_at = absl::FromUnixMillis(1767229200000);
  EXPECT_EQ(DumpJson(DeadJson(d, /*with_payload=*/true)),
            std::string(R"({"state":"dead","undecodable":false,)") + kMembers +
                R"("first_attempt":null,"first_attempt_unix_ms":null,)"
                R"("last_error":"HTTP 503","last_http_status":null,)"
                R"("payload_bytes":3,"payload_base64":"/wAB",)"
                R"("dead_at":"2026-01-01T01:00:00.000Z",)"
                R"("dead_at_unix_ms":1767229200000,)"
                R"("reason":"max attempts reached"})");
}

TEST(CtlEventJsonTest, UndecodableDeadLetterHasOnlyIdSeqAndDeath) {
  DeadLetter d;
  d.event = AwkwardEvent();
  d.event.id = "undecodable-7";
  d.event.seq = 7;
  d.undecodable = true;
  d.reason = "max attempts reached";
  d.dead_at = absl::FromUnixMillis(1767229200000);
  EXPECT_EQ(DumpJson(DeadJson(d, /*with_payload=*/true)),
            R"({"state":"dead","undecodable":true,"id":"undecodable-7",)"
            R"("seq":7,"dead_at":"2026-01-01T01:00:00.000Z",)"
            R"("dead_at_unix_ms":1767229200000,)"
            R"("reason":"max attempts reached"})");
}

TEST(CtlEventJsonTest, TimeIsRfc3339AndUnixMillisOrNullWhenInfinite) {
  nlohmann::ordered_json j;
  SetTime("t", absl::FromUnixMillis(1767225600123), &j);
  SetTime("never", absl::InfiniteFuture(), &j);
  EXPECT_EQ(DumpJson(j),
            R"({"t":"2026-01-01T00:00:00.123Z","t_unix_ms":1767225600123,)"
            R"("never":null,"never_unix_ms":null})");
}

}  // namespace
}  // namespace outbox::ctl
