// Copyright (c) edge-outbox authors.

#include "agent/telemetry/log_format.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/status.h"

namespace outbox {
namespace {

LogRecord Record(std::string message) {
  LogRecord r;
  // 2026-12-01T10:00:00.123Z
  r.time = absl::FromUnixMillis(1796119200123);
  r.severity = LogSeverity::kWarning;
  r.event = LogEvent::kDestinationUnreachable;
  r.event_id = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
  r.destination = "sink";
  r.message = std::move(message);
  return r;
}

nlohmann::json Parse(const std::string& line) {
  return nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
}

TEST(LogFormatTest, TextLooksAsBefore) {
  EXPECT_EQ(FormatLogLine(Record("destination sink reachable again"),
                          LogFormat::kText, "outbox-agent"),
            "2026-12-01T10:00:00.123Z outbox-agent: destination sink "
            "reachable again");
}

TEST(LogFormatTest, JsonHasEveryField) {
  const nlohmann::json j =
      Parse(FormatLogLine(Record("unreachable"), LogFormat::kJson, "x"));
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["ts"], "2026-12-01T10:00:00.123Z");
  EXPECT_EQ(j["level"], "warning");
  EXPECT_EQ(j["event"], "destination_unreachable");
  EXPECT_EQ(j["event_id"], "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
  EXPECT_EQ(j["destination"], "sink");
  EXPECT_EQ(j["msg"], "unreachable");
}

TEST(LogFormatTest, JsonStartsWithTheTimestamp) {
  EXPECT_TRUE(absl::StartsWith(
      FormatLogLine(Record("m"), LogFormat::kJson, "x"), "{\"ts\":"));
}

TEST(LogFormatTest, JsonLeavesOutAbsentIdAndDestination) {
  LogRecord r = Record("store opened");
  r.event_id.clear();
  r.destination.clear();
  const nlohmann::json j = Parse(FormatLogLine(r, LogFormat::kJson, "x"));
  ASSERT_TRUE(j.is_object());
  EXPECT_FALSE(j.contains("event_id"));
  EXPECT_FALSE(j.contains("destination"));
}

TEST(LogFormatTest, JsonEscapesQuotesAndControlCharactersInOneLine) {
  const std::string message =
      "HTTP 503 \"busy\"\r\n{\"forged\":1}\t\x01\x7f back\\slash";
  const std::string line =
      FormatLogLine(Record(message), LogFormat::kJson, "x");
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.find('\r'), std::string::npos);
  EXPECT_EQ(line.find('\x01'), std::string::npos);
  const nlohmann::json j = Parse(line);
  ASSERT_TRUE(j.is_object()) << line;
  EXPECT_EQ(j["msg"], message);  // round-trips exactly
  EXPECT_FALSE(j.contains("forged"));
}

TEST(LogFormatTest, JsonReplacesBytesThatAreNotUtf8) {
  const std::string line =
      FormatLogLine(Record("bad \xff\xfe byte"), LogFormat::kJson, "x");
  const nlohmann::json j = Parse(line);
  ASSERT_TRUE(j.is_object()) << line;
  EXPECT_EQ(j["msg"], "bad \xEF\xBF\xBD\xEF\xBF\xBD byte");  // U+FFFD twice
}

TEST(LogFormatTest, TextKeepsALineBreakFromForgingASecondLine) {
  const std::string line = FormatLogLine(
      Record("reason\n2026-12-01T10:00:00.000Z outbox-agent: forged"),
      LogFormat::kText, "outbox-agent");
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_TRUE(absl::StrContains(line, "reason\\n2026")) << line;
}

TEST(LogFormatTest, ParsesTheTwoFormatNames) {
  absl::StatusOr<LogFormat> text = ParseLogFormat("text");
  ASSERT_OUTBOX_OK(text);
  EXPECT_EQ(*text, LogFormat::kText);
  absl::StatusOr<LogFormat> json = ParseLogFormat("json");
  ASSERT_OUTBOX_OK(json);
  EXPECT_EQ(*json, LogFormat::kJson);
}

TEST(LogFormatTest, RefusesAnotherFormatNamingTheValidOnes) {
  absl::StatusOr<LogFormat> bad = ParseLogFormat("xml");
  EXPECT_STATUS_CODE(bad, absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "text or json"));
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "xml"));
}

}  // namespace
}  // namespace outbox
