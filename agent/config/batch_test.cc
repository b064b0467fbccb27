// Copyright (c) edge-outbox authors.
//
// A destination's `batch`: defaults, bounds, and where it does not apply.

#include <string>

#include "agent/config/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<AgentConfig> Parse(const std::string& destination_fields) {
  return ParseAgentConfig(
      "destinations {\n  name: \"d\"\n" + destination_fields + "}\n",
      "cfg.textproto");
}

const char kUrl[] = "  url: \"https://h.example/x\"\n";

TEST(ConfigBatchTest, UnsetMeansOneEventPerRequest) {
  absl::StatusOr<AgentConfig> config = Parse(kUrl);
  ASSERT_OUTBOX_OK(config);
  EXPECT_FALSE(config->destinations[0].batch.enabled);
}

TEST(ConfigBatchTest, AnEmptyBatchTakesTheDefaults) {
  absl::StatusOr<AgentConfig> config =
      Parse(std::string(kUrl) + "  batch {}\n");
  ASSERT_OUTBOX_OK(config);
  const BatchSettings& b = config->destinations[0].batch;
  EXPECT_TRUE(b.enabled);
  EXPECT_EQ(b.max_events, 100u);
  EXPECT_EQ(b.max_bytes, 1u << 20);
  EXPECT_EQ(b.max_wait, absl::ZeroDuration());
}

TEST(ConfigBatchTest, FieldsAreReadAndBounded) {
  absl::StatusOr<AgentConfig> config =
      Parse(std::string(kUrl) +
            "  batch { max_events: 7 max_bytes: 4096 max_wait: \"250ms\" }\n");
  ASSERT_OUTBOX_OK(config);
  const BatchSettings& b = config->destinations[0].batch;
  EXPECT_EQ(b.max_events, 7u);
  EXPECT_EQ(b.max_bytes, 4096u);
  EXPECT_EQ(b.max_wait, absl::Milliseconds(250));
  EXPECT_THAT(Parse(std::string(kUrl) + "  batch { max_events: 0 }\n")
                  .status()
                  .message(),
              HasSubstr("batch.max_events: must be 1..10000, got 0"));
  EXPECT_THAT(Parse(std::string(kUrl) + "  batch { max_bytes: 100 }\n")
                  .status()
                  .message(),
              HasSubstr("batch.max_bytes: must be 1024..67108864"));
  EXPECT_THAT(Parse(std::string(kUrl) + "  batch { max_wait: \"-1s\" }\n")
                  .status()
                  .message(),
              HasSubstr("batch.max_wait"));
}

TEST(ConfigBatchTest, CompressionIsGzipZstdOrNone) {
  absl::StatusOr<AgentConfig> config =
      Parse(std::string(kUrl) + "  batch {}\n");
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->destinations[0].batch.compression, BodyCoding::kIdentity);
  const struct {
    const char* name;
    BodyCoding coding;
  } cases[] = {{"gzip", BodyCoding::kGzip},
               {"zstd", BodyCoding::kZstd},
               {"none", BodyCoding::kIdentity}};
  for (const auto& c : cases) {
    config = Parse(std::string(kUrl) + "  batch { compression: \"" + c.name +
                   "\" }\n");
    ASSERT_OUTBOX_OK(config);
    EXPECT_EQ(config->destinations[0].batch.compression, c.coding) << c.name;
  }
  for (const char* bad : {"br", "identity", "GZIP "}) {
    EXPECT_THAT(
        Parse(std::string(kUrl) + "  batch { compression: \"" + bad + "\" }\n")
            .status()
            .message(),
        HasSubstr("batch.compression: must be \"gzip\", \"zstd\""))
        << bad;
  }
  // The agent sets Content-Encoding itself.
  EXPECT_EQ(Parse(std::string(kUrl) +
                  "  headers { key: \"Content-Encoding\" value: \"gzip\" }\n")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ConfigRateLimitTest, EitherFigureIsPositiveAndOneIsRequired) {
  absl::StatusOr<AgentConfig> config =
      Parse(std::string(kUrl) +
            "  rate_limit { events_per_second: 0.5 bytes_per_second: 4096 }\n");
  ASSERT_OUTBOX_OK(config);
  const RateLimitSettings& r = config->destinations[0].rate_limit;
  EXPECT_EQ(r.events_per_second, 0.5);
  EXPECT_EQ(r.bytes_per_second, 4096);
  config = Parse(std::string(kUrl));
  ASSERT_OUTBOX_OK(config);
  EXPECT_FALSE(config->destinations[0].rate_limit.enabled());
  EXPECT_THAT(
      Parse(std::string(kUrl) + "  rate_limit { events_per_second: -1 }\n")
          .status()
          .message(),
      HasSubstr("rate_limit.events_per_second: must be > 0"));
  EXPECT_THAT(
      Parse(std::string(kUrl) + "  rate_limit { events_per_second: nan }\n")
          .status()
          .message(),
      HasSubstr("rate_limit.events_per_second: must be > 0"));
  EXPECT_THAT(
      Parse(std::string(kUrl) + "  rate_limit { bytes_per_second: -5 }\n")
          .status()
          .message(),
      HasSubstr("rate_limit.bytes_per_second: must be > 0"));
  EXPECT_THAT(Parse(std::string(kUrl) + "  rate_limit {}\n").status().message(),
              HasSubstr("needs events_per_second or bytes_per_second"));
}

TEST(ConfigBatchTest, TheBatchHeadersCannotBeConfigured) {
  for (const char* name : {"outbox-event-ids", "Outbox-Batch-Size"}) {
    absl::StatusOr<AgentConfig> config =
        Parse(std::string(kUrl) + "  headers { key: \"" + name +
              "\" value: \"x\" }\n");
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(config.status().message(), HasSubstr("is set by the agent"))
        << name;
  }
}

TEST(ConfigBatchTest, MqttDestinationsCannotBatch) {
  absl::StatusOr<AgentConfig> config = Parse(
      "  mqtt { broker: \"mqtt://h\" client_id: \"c\" topic: \"t/{type}\" }\n"
      "  batch {}\n");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("batch: applies to HTTP destinations only"));
}

}  // namespace
}  // namespace outbox
