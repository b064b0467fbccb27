// Copyright (c) edge-outbox authors.

#include "tools/sink/sink_options.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox::sink {
namespace {

std::vector<std::string> Required() {
  return {"--port", "0", "--secret-file", "s.txt", "--log", "l.jsonl"};
}

std::vector<std::string> With(std::vector<std::string> extra) {
  std::vector<std::string> args = Required();
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(SinkOptionsTest, RequiredFlagsAndDefaults) {
  absl::StatusOr<SinkOptions> o = ParseSinkFlags(Required());
  ASSERT_OUTBOX_OK(o);
  EXPECT_EQ(o->port, 0);
  EXPECT_EQ(o->secret_file, "s.txt");
  EXPECT_EQ(o->log_path, "l.jsonl");
  EXPECT_EQ(o->bind_address, "127.0.0.1");
  EXPECT_EQ(o->timestamp_tolerance, absl::Minutes(5));
  EXPECT_EQ(o->faults.drop_rate, 0);
  EXPECT_EQ(o->faults.fail_status, 503);
  EXPECT_FALSE(o->faults.seed.has_value());
}

TEST(SinkOptionsTest, EqualsSyntaxWorks) {
  absl::StatusOr<SinkOptions> o = ParseSinkFlags(
      {"--port=8080", "--secret-file=a", "--log=b", "--fail-rate=0.25"});
  ASSERT_OUTBOX_OK(o);
  EXPECT_EQ(o->port, 8080);
  EXPECT_DOUBLE_EQ(o->faults.fail_rate, 0.25);
}

TEST(SinkOptionsTest, EachRequiredFlagIsRequired) {
  for (int skip = 0; skip < 3; ++skip) {
    std::vector<std::string> args;
    const std::vector<std::string> all = Required();
    for (int i = 0; i < 3; ++i) {
      if (i == skip) continue;
      args.push_back(all[2 * i]);
      args.push_back(all[2 * i + 1]);
    }
    absl::StatusOr<SinkOptions> o = ParseSinkFlags(args);
    ASSERT_STATUS_CODE(o, absl::StatusCode::kInvalidArgument);
    EXPECT_NE(o.status().message().find(all[2 * skip]), std::string::npos)
        << o.status();
  }
}

TEST(SinkOptionsTest, RejectsBadValues) {
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{
           {"--fail-rate", "1.5"},
           {"--drop-rate", "-0.1"},
           {"--throttle-rate", "nan"},
           {"--fail-status", "700"},
           {"--delay-ms", "ten"},
           {"--status-for-type", "order.voided"},
           {"--status-for-type", "=410"},
           {"--status-for-type", "x=99"},
           {"--retry-after", "1\r\nX-Evil: 1"},
           {"--seed", "-3"},
           {"--tls-cert", "c.pem"},
           {"--drop-rate", "0.5", "--fail-rate", "0.4", "--throttle-rate",
            "0.2"},
           {"--bogus", "1"},
           {"stray"},
           {"--log"},
       }) {
    EXPECT_STATUS_CODE(ParseSinkFlags(With(extra)),
                       absl::StatusCode::kInvalidArgument)
        << extra[0];
  }
  EXPECT_STATUS_CODE(ParseSinkFlags({"--port", "65536"}),
                     absl::StatusCode::kInvalidArgument);
}

TEST(SinkOptionsTest, FaultFlags) {
  absl::StatusOr<SinkOptions> o =
      ParseSinkFlags(With({"--drop-rate",
                           "0.1",
                           "--fail-rate",
                           "0.2",
                           "--fail-status",
                           "500",
                           "--throttle-rate",
                           "0.7",
                           "--retry-after",
                           "Sun, 06 Nov 1994 08:49:37 GMT",
                           "--delay-ms",
                           "250",
                           "--status-for-type",
                           "order.voided=410",
                           "--status-for-type",
                           "a=b=422",
                           "--type-header",
                           "x-kind",
                           "--seed",
                           "42",
                           "--timestamp-tolerance",
                           "60"}));
  ASSERT_OUTBOX_OK(o);
  EXPECT_DOUBLE_EQ(o->faults.drop_rate, 0.1);
  EXPECT_EQ(o->faults.fail_status, 500);
  EXPECT_EQ(o->faults.retry_after, "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(o->faults.delay, absl::Milliseconds(250));
  EXPECT_EQ(o->faults.status_for_type.at("order.voided"), 410);
  EXPECT_EQ(o->faults.status_for_type.at("a=b"), 422);
  EXPECT_EQ(o->faults.type_header, "x-kind");
  EXPECT_EQ(o->faults.seed, 42u);
  EXPECT_EQ(o->timestamp_tolerance, absl::Seconds(60));
}

TEST(SinkOptionsTest, HelpNeedsNothingElse) {
  absl::StatusOr<SinkOptions> o = ParseSinkFlags({"--help"});
  ASSERT_OUTBOX_OK(o);
  EXPECT_TRUE(o->help);
  EXPECT_NE(SinkUsage().find("TEST RECEIVER"), std::string::npos);
}

}  // namespace
}  // namespace outbox::sink
