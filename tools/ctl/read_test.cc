// Copyright (c) edge-outbox authors.
//
// The read-only commands (list, show, get, stats): truncation, escaping of
// stored bytes, and errors.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/ctl_fixture.h"
#include "tests/testing/events.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;
using testing::MakeEvent;
using ::testing::Not;
using ::testing::StartsWith;

using CtlReadTest = CtlTest;

TEST_F(CtlReadTest, ListSaysWhenItIsCutShort) {
  for (int i = 0; i < 3; ++i) Commit(MakeEvent(absl::StrCat("t", i)));
  sink::ExitResult r = Ctl({"list", "pending", "--limit", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("type=t0 "));
  EXPECT_THAT(r.out, HasSubstr("type=t1 "));
  EXPECT_THAT(r.out, Not(HasSubstr("type=t2 ")));
  EXPECT_THAT(r.out, HasSubstr("(showing the first 2 of 3 pending events"));

  const nlohmann::json v =
      Json(Ctl({"list", "pending", "--limit", "2", "--json"}));
  EXPECT_EQ(Field(v, "shown"), "2");
  EXPECT_EQ(Field(v, "total"), "3");
  EXPECT_EQ(Field(v, "truncated"), "true");
}

TEST_F(CtlReadTest, ListOfAnEmptyQueueSaysSo) {
  sink::ExitResult r = Ctl({"list", "dead"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "no dead letters\n");
}

TEST_F(CtlReadTest, ListEscapesControlCharactersInStoredStrings) {
  Commit(MakeEvent("evil\x1b[2J", "key with space"));
  sink::ExitResult r = Ctl({"list", "pending"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(r.out, HasSubstr(R"(type="evil\x1b[2J" key="key with space")"));
}

TEST_F(CtlReadTest, ListDeadShowsReasonAndLastFailure) {
  const std::string id = MakeDeadLetter(absl::Now() - absl::Hours(1));
  sink::ExitResult r = Ctl({"list", "dead"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith(id + " seq="));
  EXPECT_THAT(r.out, HasSubstr("attempts=1"));
  EXPECT_THAT(r.out, HasSubstr(R"(reason="max attempts reached")"));
  EXPECT_THAT(r.out, HasSubstr(R"(last_error="HTTP 503" http=503)"));
}

TEST_F(CtlReadTest, ShowJsonOfADeadLetterHasItsDeathAndPayload) {
  const std::string id = MakeDeadLetter(absl::Now() - absl::Hours(1));
  const nlohmann::json v = Json(Ctl({"show", id, "--json"}));
  EXPECT_EQ(Field(v, "state"), "dead");
  EXPECT_EQ(Field(v, "undecodable"), "false");
  EXPECT_EQ(Field(v, "reason"), "max attempts reached");
  EXPECT_EQ(Field(v, "last_error"), "HTTP 503");
  EXPECT_EQ(Field(v, "last_http_status"), "503");
  EXPECT_EQ(Field(v, "payload"), "{\"n\":1}");
  EXPECT_TRUE(v.at("dead_at_unix_ms").is_number_integer()) << v.dump();
}

TEST_F(CtlReadTest, ShowOfAnHttpDeadLetterGivesItsLastStatus) {
  const std::string id = MakeDeadLetter(absl::Now() - absl::Hours(1));
  sink::ExitResult r = Ctl({"show", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  last error:       \"HTTP 503\"\n"));
  EXPECT_THAT(r.out, HasSubstr("  last HTTP status: 503\n"));
}

// Dead letters as the agent leaves them when a broker refuses an event
// (Decide() in agent/decision.h: the sender's answer, then why it is given
// up, as both the last error and the reason) with no HTTP status.
constexpr char kPubackRefusal[] =
    "PUBACK: the broker answered the publish with Not authorized (0x87); the "
    "broker's ACL does not let this client publish to the topic: the "
    "receiver rejected the event";
constexpr char kKafkaRefusal[] =
    "Kafka: Broker: Topic authorization failed (TOPIC_AUTHORIZATION_FAILED); "
    "the cluster's ACLs do not let this client write to the topic: the "
    "receiver rejected the event";

class CtlBrokerDeadLetterTest : public CtlTest {
 protected:
  // `list dead`, `show` and `show --json` of a dead letter whose last
  // attempt ended with `answer` from a broker: the answer, and no HTTP
  // status (as if an HTTP receiver had never answered).
  void ExpectReadsAsTheBrokersAnswer(const std::string& answer) {
    const std::string id = MakeDeadLetterAfter(absl::Now() - absl::Hours(1),
                                               answer, 0, answer, "sale");
    const std::string quoted = absl::StrCat("\"", answer, "\"");

    sink::ExitResult r = Ctl({"list", "dead"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat(" last_error=", quoted, "\n")));
    EXPECT_THAT(r.out, Not(HasSubstr(" http="))) << r.out;

    r = Ctl({"show", id});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out,
                HasSubstr(absl::StrCat("  last error:       ", quoted, "\n")));
    EXPECT_THAT(r.out,
                HasSubstr(absl::StrCat("  reason:           ", quoted, "\n")));
    EXPECT_THAT(r.out, Not(HasSubstr("HTTP"))) << r.out;

    const nlohmann::json v = Json(Ctl({"show", id, "--json"}));
    EXPECT_EQ(Field(v, "last_error"), answer);
    EXPECT_EQ(Field(v, "reason"), answer);
    EXPECT_EQ(Field(v, "last_http_status"), "null");
    EXPECT_EQ(Field(v, "attempts"), "1");
  }
};

TEST_F(CtlBrokerDeadLetterTest, MqttRefusalReadsAsThePubackAnswer) {
  ExpectReadsAsTheBrokersAnswer(kPubackRefusal);
}

TEST_F(CtlBrokerDeadLetterTest, KafkaRefusalReadsAsTheBrokersError) {
  ExpectReadsAsTheBrokersAnswer(kKafkaRefusal);
}

TEST_F(CtlReadTest, ShowJsonGivesANonUtf8PayloadAsBase64) {
  Event e = MakeEvent("blob", "", std::string("\xFF\x00\x01", 3));
  e.content_type = "application/octet-stream";
  const std::string id = Commit(e);
  sink::ExitResult r = Ctl({"show", id, "--json"});
  const nlohmann::json v = Json(r);
  EXPECT_EQ(Field(v, "payload_base64"), "/wAB");
  EXPECT_FALSE(v.contains("payload")) << v.dump();
  EXPECT_THAT(Ctl({"show", id}).out, HasSubstr("not printable text; base64"));
}

TEST_F(CtlReadTest, ShowJsonKeepsControlCharactersOfAPayloadExactly) {
  const std::string payload = "line1\nline2\t\x01\x7f\"\\ caf\xC3\xA9";
  Event e = MakeEvent("text", "", payload);
  e.content_type = "text/plain";
  const std::string id = Commit(e);
  const nlohmann::json v = Json(Ctl({"show", id, "--json"}));
  EXPECT_EQ(Field(v, "payload"), payload);
}

TEST_F(CtlReadTest, ShowOfAnUnknownIdIsNotFound) {
  sink::ExitResult r = Ctl({"show", "0190aaaa-0000-7000-8000-000000000000"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: NOT_FOUND: "));
  EXPECT_EQ(r.out, "");
}

TEST_F(CtlReadTest, GetOfAnUnknownKeyOrTableIsNotFound) {
  sink::ExitResult r = Ctl({"get", "--table", "sales", "--key", "nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: NOT_FOUND: no key nope"));
  r = Ctl({"get", "--table", "other", "--key", "k"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND: the store has no table other "
                               "(its tables: sales)"));
}

TEST_F(CtlReadTest, StatsOfAMissingStoreIsNotFound) {
  sink::ExitResult r = CtlNoDb({"--db", dir_.Sub("nowhere"), "stats"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: NOT_FOUND: no outbox store at"));
}

}  // namespace
}  // namespace outbox::ctl
