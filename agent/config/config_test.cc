// Copyright (c) edge-outbox authors.

#include "agent/config/config.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// Secret material the tests look for in error messages.
const std::string kKeyA = "key-A-0123456789abcdef0123456789";
const std::string kKeyB = "key-B-0123456789abcdef0123456789";
const std::string kSecretA = "whsec_" + absl::Base64Escape(kKeyA);
const std::string kSecretB = "whsec_" + absl::Base64Escape(kKeyB);

class ConfigTest : public ::testing::Test {
 protected:
  // Writes `text` to `name` under the temp dir with exactly `mode`.
  std::string Write(const std::string& name, const std::string& text,
                    mode_t mode = 0600) {
    const std::string path = dir_.Sub(name);
    std::filesystem::create_directories(
        std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    EXPECT_EQ(chmod(path.c_str(), mode), 0);
    return path;
  }

  // Parses `text` as if read from <temp>/cfg.textproto.
  absl::StatusOr<AgentConfig> Parse(const std::string& text) {
    return ParseAgentConfig(text, dir_.Sub("cfg.textproto"));
  }

  // The error message of a config that must fail with `code`.
  std::string ErrorOf(
      const std::string& text,
      absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    absl::StatusOr<AgentConfig> config = Parse(text);
    EXPECT_EQ(config.status().code(), code) << config.status();
    return std::string(config.status().message());
  }

  std::string Where(int line) {
    return absl::StrCat(dir_.Sub("cfg.textproto"), ":", line, ": ");
  }

  testing::TempDir dir_;
};

// A destination "d" preceded by `before` and followed by `after` lines.
std::string OneDestination(const std::string& fields = "") {
  return "destinations {\n  name: \"d\"\n  url: \"https://h.example/x\"\n" +
         fields + "}\n";
}

TEST_F(ConfigTest, ExampleConfigParsesToExpectedValues) {
  std::ifstream in(OUTBOX_AGENT_TESTDATA_DIR "/agent.textproto");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty());
  Write("secrets/backend.whsec",
        "# rotated 2024-05\n" + kSecretA + "\r\n\n" + kSecretB + "\n");
  Write("secrets/backend.auth", "Bearer replace-me\n");
  Write("certs/backend-ca.pem", "not parsed here\n", 0644);
  const std::string path = Write("agent.textproto", text.str(), 0644);

  absl::StatusOr<AgentConfig> config = LoadAgentConfig(path);
  ASSERT_OUTBOX_OK(config);
  ASSERT_EQ(config->destinations.size(), 2u);
  const Destination& backend = config->destinations[0];
  EXPECT_EQ(backend.name, "backend");
  EXPECT_EQ(backend.url, "https://api.example.com/webhooks/outbox");
  EXPECT_EQ(backend.secrets_file, dir_.Sub("secrets/backend.whsec"));
  ASSERT_EQ(backend.secrets.size(), 2u);
  EXPECT_EQ(backend.secrets[0].key(), kKeyA);
  EXPECT_EQ(backend.secrets[1].key(), kKeyB);
  EXPECT_EQ(backend.connect_timeout, absl::Seconds(5));
  EXPECT_EQ(backend.timeout, absl::Seconds(20));
  ASSERT_EQ(backend.headers.size(), 2u);
  EXPECT_EQ(backend.headers[0].first, "X-Device");
  EXPECT_EQ(backend.headers[0].second, "till-07");
  EXPECT_EQ(backend.headers[1].first, "Authorization");
  EXPECT_EQ(backend.headers[1].second, "Bearer replace-me");
  EXPECT_EQ(backend.tls.ca_file, dir_.Sub("certs/backend-ca.pem"));
  EXPECT_TRUE(backend.tls.verify_peer);
  EXPECT_TRUE(backend.tls.verify_host);
  EXPECT_EQ(backend.retry.max_age, absl::Hours(72));

  const Destination& analytics = config->destinations[1];
  EXPECT_TRUE(analytics.secrets.empty());
  EXPECT_EQ(analytics.proxy, "socks5h://127.0.0.1:1080");
  EXPECT_EQ(analytics.connect_timeout, absl::Seconds(10));
  EXPECT_EQ(analytics.timeout, absl::Seconds(30));
  EXPECT_EQ(analytics.retry.max_age, absl::Hours(6));
  EXPECT_EQ(analytics.retry.max_attempts, 50);
  EXPECT_EQ(analytics.retry.max_delay, absl::Minutes(10));

  ASSERT_EQ(config->routes.size(), 3u);
  EXPECT_EQ(config->routes[0].kind, RouteRule::Kind::kPrefix);
  EXPECT_EQ(config->routes[0].prefix, "sale.");
  EXPECT_EQ(config->routes[2].kind, RouteRule::Kind::kAny);
  EXPECT_EQ(config->agent.max_in_flight, 8);
  EXPECT_EQ(config->agent.probe_interval_max, absl::Seconds(30));
  EXPECT_EQ(config->agent.dead_letter_retention, absl::Hours(720));
}

TEST_F(ConfigTest, UnsetFieldsTakeDefaults) {
  absl::StatusOr<AgentConfig> config = Parse(OneDestination());
  ASSERT_OUTBOX_OK(config);
  const RetryPolicy defaults;
  EXPECT_EQ(config->retry.base_delay, defaults.base_delay);
  EXPECT_EQ(config->retry.max_attempts, defaults.max_attempts);
  EXPECT_EQ(config->destinations[0].retry.max_age, defaults.max_age);
  EXPECT_EQ(config->agent.max_in_flight, 8);
  EXPECT_EQ(config->agent.probe_interval_min, absl::Seconds(1));
  EXPECT_EQ(config->agent.idempotency_purge_interval, absl::Hours(1));
  EXPECT_TRUE(config->destinations[0].tls.verify_peer);
  EXPECT_TRUE(config->routes.empty());
  EXPECT_EQ(config->agent.metrics_file, "");  // no metrics file
  EXPECT_EQ(config->agent.metrics_interval, absl::Seconds(15));
}

// A 2xx always delivers (docs/transports.md, "What each answer means"):
// `answers` gives a meaning to 300..599 only, so no entry can make a 2xx a
// retry, a hold or a dead letter.
TEST_F(ConfigTest, AnswersCannotGiveA2xxAnotherMeaning) {
  for (int status : {200, 204, 299}) {
    for (const char* meaning : {"retry", "dead_letter", "hold", "pause"}) {
      EXPECT_THAT(
          ErrorOf(OneDestination(absl::StrCat(
              "  answers { key: ", status, " value: \"", meaning, "\" }\n"))),
          HasSubstr(absl::StrCat("status ", status,
                                 " cannot be given a meaning: use "
                                 "300..599 (a 2xx is always "
                                 "delivered)")))
          << status << " " << meaning;
    }
  }
  absl::StatusOr<AgentConfig> lowest =
      Parse(OneDestination("  answers { key: 300 value: \"retry\" }\n"));
  ASSERT_OUTBOX_OK(lowest);
  EXPECT_EQ(lowest->destinations[0].retry.answers.at(300),
            DeliveryOutcome::kRetry);
}

TEST_F(ConfigTest, MetricsFileResolvesAgainstConfigDirectory) {
  absl::StatusOr<AgentConfig> config = Parse(
      OneDestination() +
      "agent { metrics_file: \"outbox.prom\" metrics_interval: \"5s\" }\n");
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->agent.metrics_file, dir_.Sub("outbox.prom"));
  EXPECT_EQ(config->agent.metrics_interval, absl::Seconds(5));
}

TEST_F(ConfigTest, MetricsIntervalMustBePositive) {
  EXPECT_THAT(
      ErrorOf(OneDestination() + "agent { metrics_interval: \"0\" }"),
      HasSubstr(Where(5) + "agent.metrics_interval: must be > 0, got \"0\""));
  EXPECT_THAT(
      ErrorOf(OneDestination() + "agent { metrics_interval: \"-10s\" }"),
      HasSubstr(Where(5) + "agent.metrics_interval: must be > 0"));
}

TEST_F(ConfigTest, MetricsFileInAMissingDirectoryIsNotFoundAndSaysWhich) {
  const std::string message =
      ErrorOf(OneDestination() + "agent { metrics_file: \"none/outbox.prom\" }",
              absl::StatusCode::kNotFound);
  EXPECT_THAT(message, HasSubstr(Where(5) +
                                 "agent.metrics_file: cannot write "
                                 "metrics there: directory " +
                                 dir_.Sub("none") + " does not exist"));
}

TEST_F(ConfigTest, MetricsFileUnderAFileIsRefused) {
  Write("plain", "x");
  EXPECT_THAT(
      ErrorOf(OneDestination() + "agent { metrics_file: \"plain/m.prom\" }",
              absl::StatusCode::kFailedPrecondition),
      HasSubstr("agent.metrics_file: cannot write metrics there: " +
                dir_.Sub("plain") + " is not a directory"));
}

TEST_F(ConfigTest, SyntaxErrorNamesFileLineColumnAndField) {
  const std::string message =
      ErrorOf("destinations {\n  name: \"d\"\n  urll: \"https://h/\"\n}\n");
  EXPECT_THAT(message, HasSubstr(dir_.Sub("cfg.textproto") + ":3:"));
  EXPECT_THAT(message, HasSubstr("\"urll\""));
}

TEST_F(ConfigTest, RouteToUnknownDestinationIsAnError) {
  const std::string message = ErrorOf(
      OneDestination() + "routes { event_type: \"*\" destination: \"dd\" }\n");
  EXPECT_THAT(message, HasSubstr(Where(5) + "routes[0].destination: "));
  EXPECT_THAT(message, HasSubstr("\"dd\""));
}

TEST_F(ConfigTest, NonHttpUrlIsAnError) {
  const std::string message =
      ErrorOf(OneDestination() +
              "destinations {\n  name: \"e\"\n  url: \"ftp://x\"\n}\n");
  EXPECT_THAT(message, HasSubstr(Where(7) + "destinations[1].url: \"ftp://x\" "
                                            "is not an http(s) URL"));
  EXPECT_THAT(ErrorOf(OneDestination() + "destinations { name: \"e\" }"),
              HasSubstr("destinations[1].url: is required"));
  EXPECT_THAT(ErrorOf("destinations { name: \"e\" url: \"https:///p\" }"),
              HasSubstr("it has no host"));
}

TEST_F(ConfigTest, UrlWithCredentialsIsRejectedWithoutQuotingThem) {
  const std::string message = ErrorOf(
      "destinations { name: \"e\" url: \"https://u:hunter2@h.example/\" }");
  EXPECT_THAT(message, HasSubstr("destinations[0].url: must not contain"));
  EXPECT_THAT(message, Not(HasSubstr("hunter2")));
}

TEST_F(ConfigTest, BadProxyIsRejectedWithoutQuotingIt) {
  const std::string message =
      ErrorOf(OneDestination("  proxy: \"ftp://u:pw9@p.example:21\"\n"));
  EXPECT_THAT(message, HasSubstr(Where(4) + "destinations[0].proxy: is not a "
                                            "proxy URL"));
  EXPECT_THAT(message, HasSubstr("does not start with http://, https://"));
  EXPECT_THAT(message, Not(HasSubstr("pw9")));
}

TEST_F(ConfigTest, DuplicateDestinationNameIsAnError) {
  const std::string message = ErrorOf(OneDestination() + OneDestination());
  EXPECT_THAT(message, HasSubstr(Where(6) + "destinations[1].name: \"d\" is "
                                            "already the name of the "
                                            "destination at line 1"));
}

TEST_F(ConfigTest, SecretsFileReadableByOthersIsRefusedWithChmodAdvice) {
  const std::string path = Write("s.whsec", kSecretA + "\n", 0644);
  const std::string message =
      ErrorOf(OneDestination("  secrets_file: \"s.whsec\"\n"),
              absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(message, HasSubstr(Where(4) + "destinations[0].secrets_file: "));
  EXPECT_THAT(message, HasSubstr("chmod 600 " + path));
  EXPECT_THAT(message, HasSubstr("0644"));
  Write("s.whsec", kSecretA + "\n", 0640);
  ErrorOf(OneDestination("  secrets_file: \"s.whsec\"\n"),
          absl::StatusCode::kFailedPrecondition);
}

TEST_F(ConfigTest, MissingSecretsFileIsNotFound) {
  const std::string message =
      ErrorOf(OneDestination("  secrets_file: \"nope.whsec\"\n"),
              absl::StatusCode::kNotFound);
  EXPECT_THAT(message, HasSubstr(dir_.Sub("nope.whsec") + " does not exist"));
}

TEST_F(ConfigTest, SecretsFileWithoutSecretsIsAnError) {
  Write("empty.whsec", "# nothing yet\n\n");
  EXPECT_THAT(ErrorOf(OneDestination("  secrets_file: \"empty.whsec\"\n")),
              HasSubstr("holds no secret"));
}

TEST_F(ConfigTest, RelativeSecretsPathResolvesAgainstConfigDirectory) {
  Write("etc/keys/d.whsec", kSecretA + "\n");
  const std::string config_path =
      Write("etc/agent.textproto",
            OneDestination("  secrets_file: \"keys/d.whsec\"\n"), 0644);
  absl::StatusOr<AgentConfig> config = LoadAgentConfig(config_path);
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->destinations[0].secrets_file, dir_.Sub("etc/keys/d.whsec"));
  ASSERT_EQ(config->destinations[0].secrets.size(), 1u);
  EXPECT_EQ(config->destinations[0].secrets[0].key(), kKeyA);
}

// A stored workflow definition names the same files wherever the
// configuration moves later (agent/config/definition.h).
TEST_F(ConfigTest, AWorkflowDefinitionNamesFilesByTheirResolvedPaths) {
  Write("etc/keys/d.whsec", kSecretA + "\n");
  const std::string config_path = Write(
      "etc/agent.textproto",
      OneDestination("  secrets_file: \"keys/d.whsec\"\n") +
          R"(workflows { event_type: "o" steps { name: "a" destination: "d" } })",
      0644);
  absl::StatusOr<AgentConfig> config = LoadAgentConfig(config_path);
  ASSERT_OUTBOX_OK(config);
  const std::string& definition = config->workflows[0].definition;
  EXPECT_THAT(definition,
              HasSubstr(absl::StrCat("secrets_file: \"",
                                     dir_.Sub("etc/keys/d.whsec"), "\"")));
  EXPECT_THAT(definition, ::testing::Not(HasSubstr(kSecretA)));
}

TEST_F(ConfigTest, ErrorMessagesNeverContainSecretMaterial) {
  // A malformed line after a valid one: the message names the line only.
  Write("bad.whsec", kSecretA + "\n" + kSecretB + "!x\n");
  std::string message =
      ErrorOf(OneDestination("  secrets_file: \"bad.whsec\"\n"));
  EXPECT_THAT(message, HasSubstr("bad.whsec line 2: "));
  // The secret pasted where its file's path belongs.
  const std::string pasted =
      ErrorOf(OneDestination("  secrets_file: \"" + kSecretA + "\"\n"));
  EXPECT_THAT(pasted, HasSubstr("holds a secret instead of the path"));
  // The secret pasted unquoted: a syntax error, which quotes the token.
  const std::string syntax =
      ErrorOf(OneDestination("  secrets_file: " + kSecretA + "\n"));
  EXPECT_THAT(syntax, HasSubstr(Where(4).substr(0, Where(4).size() - 2)));
  // A header value is never quoted.
  const std::string header = ErrorOf(OneDestination(
      "  headers { key: \"X-Token\" value: \"tok-s3cr3t\\r\\nX: y\" }\n"));
  EXPECT_THAT(header, HasSubstr("\"X-Token\" contains CR, LF or NUL"));
  EXPECT_THAT(header, Not(HasSubstr("s3cr3t")));

  // Any 12 characters of a key's base64 count as a leak: the parser quotes
  // only as much of an unquoted token as its tokenizer takes.
  const std::string secrets[] = {kKeyA, kKeyB,
                                 absl::Base64Escape(kKeyA).substr(0, 12),
                                 absl::Base64Escape(kKeyB).substr(0, 12)};
  for (const std::string& m : {message, pasted, syntax}) {
    for (const std::string& secret : secrets) {
      EXPECT_THAT(m, Not(HasSubstr(secret)));
    }
  }
}

TEST_F(ConfigTest, WorkflowStorageIsStatesRowsOrRefused) {
  absl::StatusOr<AgentConfig> unset = Parse(OneDestination());
  ASSERT_OUTBOX_OK(unset);
  EXPECT_EQ(unset->agent.workflow_rows, workflow::kWriteWorkflowRows);
  absl::StatusOr<AgentConfig> rows =
      Parse(OneDestination() + "agent { workflow_storage: \"rows\" }");
  ASSERT_OUTBOX_OK(rows);
  EXPECT_TRUE(rows->agent.workflow_rows);
  absl::StatusOr<AgentConfig> states =
      Parse(OneDestination() + "agent { workflow_storage: \"states\" }");
  ASSERT_OUTBOX_OK(states);
  EXPECT_FALSE(states->agent.workflow_rows);
  EXPECT_THAT(
      ErrorOf(OneDestination() + "agent { workflow_storage: \"Rows\" }"),
      HasSubstr("agent.workflow_storage: must be \"states\" or \"rows\", "
                "got \"Rows\""));
}

TEST_F(ConfigTest, BadDurationNamesFieldAndLine) {
  const std::string message = ErrorOf(OneDestination("  timeout: \"10\"\n"));
  EXPECT_THAT(message, HasSubstr(Where(4) + "destinations[0].timeout: \"10\" "
                                            "is not a duration"));
  EXPECT_THAT(ErrorOf("retry {\n  max_age: \"3 days\"\n}\n" + OneDestination()),
              HasSubstr(Where(2) + "retry.max_age: "));
  EXPECT_THAT(
      ErrorOf(OneDestination() + "agent { probe_interval_max: \"inf\" }"),
      HasSubstr("agent.probe_interval_max: \"inf\" is not a duration"));
}

TEST_F(ConfigTest, HeadersTheAgentSetsAreRejected) {
  for (const char* name : {"webhook-id", "Webhook-Signature", "Content-Type",
                           "idempotency-key", "content-length", "HOST"}) {
    const std::string message = ErrorOf(OneDestination(
        absl::StrCat("  headers { key: \"", name, "\" value: \"v\" }\n")));
    EXPECT_THAT(message,
                HasSubstr(Where(4) + "destinations[0].headers[0]: header \"" +
                          name + "\" is set by the agent"));
  }
}

TEST_F(ConfigTest, HeaderNamesAreCaseInsensitivelyUnique) {
  EXPECT_THAT(
      ErrorOf(OneDestination("  headers { key: \"X-A\" value: \"1\" }\n"
                             "  headers { key: \"x-a\" value: \"2\" }\n")),
      HasSubstr(Where(5) + "destinations[0].headers[1]: header \"x-a\" "
                           "given twice"));
  EXPECT_THAT(
      ErrorOf(OneDestination("  headers { key: \"X A\" value: \"1\" }\n")),
      HasSubstr("is not a valid header name"));
}

TEST_F(ConfigTest, HeaderValueFromAFileLosesOnlyItsFinalNewline) {
  Write("auth", "Bearer tok-1\r\n");
  Write("key", "k2");
  absl::StatusOr<AgentConfig> config = Parse(OneDestination(
      "  headers { key: \"X-Device\" value: \"till-07\" }\n"
      "  header_files { key: \"Authorization\" value: \"auth\" }\n"
      "  header_files { key: \"X-Api-Key\" value: \"key\" }\n"));
  ASSERT_OUTBOX_OK(config);
  const auto& headers = config->destinations[0].headers;
  ASSERT_EQ(headers.size(), 3u);
  EXPECT_EQ(headers[0],
            std::make_pair(std::string("X-Device"), std::string("till-07")));
  EXPECT_EQ(headers[1], std::make_pair(std::string("Authorization"),
                                       std::string("Bearer tok-1")));
  EXPECT_EQ(headers[2],
            std::make_pair(std::string("X-Api-Key"), std::string("k2")));
}

TEST_F(ConfigTest, HeaderValueFileReadableByOthersIsRefusedWithoutItsPath) {
  const std::string path = Write("auth", "Bearer tok-1\n", 0644);
  const std::string message = ErrorOf(
      OneDestination(
          "  header_files { key: \"Authorization\" value: \"auth\" }\n"),
      absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(message, HasSubstr(Where(4) +
                                 "destinations[0].header_files[0]: header "
                                 "\"Authorization\": value file is "
                                 "accessible to group or others (mode 0644)"));
  EXPECT_THAT(message, HasSubstr("chmod 600"));
  EXPECT_THAT(message, Not(HasSubstr(path)));
  EXPECT_THAT(message, Not(HasSubstr("tok-1")));
}

TEST_F(ConfigTest, HeaderValueWrittenWhereItsPathBelongsIsNeverEchoed) {
  const std::string message =
      ErrorOf(OneDestination("  header_files { key: \"Authorization\" "
                             "value: \"Bearer tok-s3cr3t\" }\n"),
              absl::StatusCode::kNotFound);
  EXPECT_THAT(message,
              HasSubstr(Where(4) + "destinations[0].header_files[0]: header "
                                   "\"Authorization\": value file does not "
                                   "exist"));
  EXPECT_THAT(message, Not(HasSubstr("s3cr3t")));
}

TEST_F(ConfigTest, EmptyHeaderValueFileIsAnError) {
  Write("empty", "\n");
  EXPECT_THAT(ErrorOf(OneDestination(
                  "  header_files { key: \"X-K\" value: \"empty\" }\n")),
              HasSubstr("header \"X-K\": value file is empty"));
}

TEST_F(ConfigTest, HeaderValueFileWithTwoLinesIsRefusedWithoutQuotingIt) {
  Write("two", "tok-1\nX-Evil: y\n");
  const std::string message = ErrorOf(
      OneDestination("  header_files { key: \"X-K\" value: \"two\" }\n"));
  EXPECT_THAT(message, HasSubstr("value file holds more than one line"));
  EXPECT_THAT(message, Not(HasSubstr("tok-1")));
}

TEST_F(ConfigTest, HeaderFilesEntryWithoutAPathIsAnError) {
  EXPECT_THAT(
      ErrorOf(OneDestination("  header_files { key: \"X-K\" value: \"\" }\n")),
      HasSubstr("header \"X-K\": needs the path of its value file"));
}

TEST_F(ConfigTest, HeaderValueFileOfMoreThan8KiBIsRefused) {
  Write("fits", std::string(8191, 'a') + "\n");
  Write("big", std::string(8193, 'a'));
  ASSERT_OUTBOX_OK(Parse(
      OneDestination("  header_files { key: \"X-K\" value: \"fits\" }\n")));
  EXPECT_THAT(ErrorOf(OneDestination(
                  "  header_files { key: \"X-K\" value: \"big\" }\n")),
              HasSubstr("value file is larger than 8 KiB"));
}

TEST_F(ConfigTest, HeaderValueFileThatIsNotARegularFileIsRefusedAtOnce) {
  std::filesystem::create_directories(dir_.Sub("dir"));
  // A FIFO would block a plain open() until a writer came: the agent must
  // refuse it, not hang at start-up.
  ASSERT_EQ(mkfifo(dir_.Sub("fifo").c_str(), 0600), 0);
  for (const char* name : {"dir", "fifo"}) {
    EXPECT_THAT(
        ErrorOf(OneDestination(absl::StrCat(
                    "  header_files { key: \"X-K\" value: \"", name, "\" }\n")),
                absl::StatusCode::kFailedPrecondition),
        HasSubstr("header \"X-K\": value file is not a regular file"));
  }
}

TEST_F(ConfigTest, HeaderNameMayNotRepeatAcrossHeadersAndHeaderFiles) {
  Write("auth", "Bearer tok-1\n");
  EXPECT_THAT(
      ErrorOf(OneDestination(
          "  headers { key: \"Authorization\" value: \"x\" }\n"
          "  header_files { key: \"authorization\" value: \"auth\" }\n")),
      HasSubstr(Where(5) + "destinations[0].header_files[0]: header "
                           "\"authorization\" given twice"));
}

TEST_F(ConfigTest, HeaderFilesCannotSetHeadersTheAgentSets) {
  Write("auth", "Bearer tok-1\n");
  EXPECT_THAT(ErrorOf(OneDestination(
                  "  header_files { key: \"Webhook-Id\" value: \"auth\" }\n")),
              HasSubstr("header \"Webhook-Id\" is set by the agent"));
}

TEST_F(ConfigTest, SyntaxErrorsDoNotRepeatTheTokenTheyStoppedAt) {
  const std::string unquoted = ErrorOf(OneDestination(
      "  headers { key: \"Authorization\" value: ghp_s3cr3t }\n"));
  EXPECT_THAT(unquoted, HasSubstr(Where(4).substr(0, Where(4).size() - 2)));
  EXPECT_THAT(unquoted, HasSubstr("Expected string at this column"));
  EXPECT_THAT(unquoted, Not(HasSubstr("s3cr3t")));
}

TEST_F(ConfigTest, InvalidHeaderNameIsNotQuoted) {
  // Key and value the wrong way round: the "name" is the credential.
  const std::string message = ErrorOf(OneDestination(
      "  headers { key: \"Bearer s3cr3t\" value: \"Authorization\" }\n"));
  EXPECT_THAT(message, HasSubstr(Where(4) + "destinations[0].headers[0]: the "
                                            "key is not a valid header name"));
  EXPECT_THAT(message, Not(HasSubstr("s3cr3t")));
}

TEST_F(ConfigTest, ZeroAndNegativeValuesAreRejectedWhereInvalid) {
  EXPECT_THAT(ErrorOf(OneDestination() + "agent { max_in_flight: 0 }"),
              HasSubstr(Where(5) + "agent.max_in_flight: must be >= 1, got 0"));
  EXPECT_THAT(ErrorOf(OneDestination("  retry { max_attempts: -3 }\n")),
              HasSubstr(Where(4) + "destinations[0].retry.max_attempts: "
                                   "must be >= 1, got -3"));
  EXPECT_THAT(ErrorOf(OneDestination("  connect_timeout: \"0s\"\n")),
              HasSubstr("destinations[0].connect_timeout: must be > 0"));
  EXPECT_THAT(ErrorOf("retry { base_delay: \"-1s\" }\n" + OneDestination()),
              HasSubstr(Where(1) + "retry.base_delay: must be > 0"));
  EXPECT_THAT(ErrorOf(OneDestination("  timeout: \"5s\"\n")),
              HasSubstr("timeout: must be >= connect_timeout"));
  // Zero is allowed where it means something.
  absl::StatusOr<AgentConfig> config =
      Parse("retry { max_retry_after: \"0\" }\n" + OneDestination() +
            "agent { dead_letter_retention: \"0\" }\n");
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->retry.max_retry_after, absl::ZeroDuration());
  EXPECT_EQ(config->agent.dead_letter_retention, absl::ZeroDuration());
}

TEST_F(ConfigTest, DestinationRetryOverridesGlobalFieldByField) {
  absl::StatusOr<AgentConfig> config =
      Parse("retry { max_delay: \"1m\" max_attempts: 7 }\n" +
            OneDestination("  retry { base_delay: \"2s\" }\n"));
  ASSERT_OUTBOX_OK(config);
  const RetryPolicy& retry = config->destinations[0].retry;
  EXPECT_EQ(retry.base_delay, absl::Seconds(2));
  EXPECT_EQ(retry.max_delay, absl::Minutes(1));
  EXPECT_EQ(retry.max_attempts, 7);
  EXPECT_EQ(config->retry.base_delay, absl::Seconds(1));
  // The override is checked against what it inherits.
  EXPECT_THAT(ErrorOf("retry { max_delay: \"1m\" }\n" +
                      OneDestination("  retry { base_delay: \"5m\" }\n")),
              HasSubstr("destinations[0].retry.max_delay: must be >= "
                        "base_delay"));
}

TEST_F(ConfigTest, TlsFilesMustExistAndVerificationIsOnUnlessTurnedOff) {
  EXPECT_THAT(ErrorOf(OneDestination("  tls { ca_file: \"ca.pem\" }\n"),
                      absl::StatusCode::kNotFound),
              HasSubstr(Where(4) + "destinations[0].tls.ca_file: "));
  Write("cert.pem", "x", 0644);
  EXPECT_THAT(
      ErrorOf(OneDestination("  tls { client_key_file: \"cert.pem\" }\n")),
      HasSubstr("needs client_cert_file"));
  absl::StatusOr<AgentConfig> config =
      Parse(OneDestination("  tls { insecure_skip_verify: true }\n"));
  ASSERT_OUTBOX_OK(config);
  EXPECT_FALSE(config->destinations[0].tls.verify_peer);
  EXPECT_FALSE(config->destinations[0].tls.verify_host);
}

TEST_F(ConfigTest, ConfigWithoutDestinationsIsAnError) {
  EXPECT_THAT(ErrorOf("agent { max_in_flight: 2 }\n"),
              HasSubstr("destinations: at least one destination is required"));
}

TEST_F(ConfigTest, InvalidRoutePatternsAndDuplicatesAreErrors) {
  EXPECT_THAT(ErrorOf(OneDestination() +
                      "routes { event_type: \"sale*\" destination: \"d\" }"),
              HasSubstr("routes[0].event_type: \"sale*\" is not an event type "
                        "pattern"));
  EXPECT_THAT(
      ErrorOf(OneDestination() +
              "routes { event_type: \"a.*\" destination: \"d\" }\n"
              "routes { event_type: \"a.*\" destination: \"d\" }\n"),
      HasSubstr(Where(6) + "routes[1].event_type: \"a.*\" is already routed "
                           "(line 5)"));
}

// Precedence is by rank, never by position: the same four rules are declared
// in every one of their 24 orders (least to most specific, most to least,
// and all the shuffles between), so "first match wins" and "last match wins"
// both fail.
TEST_F(ConfigTest, RoutePrefersExactThenLongestPrefixThenCatchAll) {
  std::string destinations;
  for (const char* name : {"exact", "long", "short", "any", "other"}) {
    destinations += absl::StrCat("destinations { name: \"", name,
                                 "\" url: \"http://h/\" }\n");
  }
  std::vector<std::string> rules = {
      R"(routes { event_type: "sale.refund.full" destination: "exact" })",
      R"(routes { event_type: "sale.refund.*" destination: "long" })",
      R"(routes { event_type: "sale.*" destination: "short" })",
      R"(routes { event_type: "*" destination: "any" })",
  };
  std::sort(rules.begin(), rules.end());
  int orders = 0;
  do {
    SCOPED_TRACE(absl::StrJoin(rules, "\n"));
    absl::StatusOr<AgentConfig> config =
        Parse(destinations + absl::StrJoin(rules, "\n"));
    ASSERT_OUTBOX_OK(config);
    auto routed = [&](const char* type, const char* explicit_destination = "") {
      absl::StatusOr<const Destination*> d =
          Route(*config, type, explicit_destination);
      return d.ok() ? (*d)->name : d.status().ToString();
    };
    EXPECT_EQ(routed("sale.refund.full"), "exact");
    EXPECT_EQ(routed("sale.refund.partial"), "long");
    EXPECT_EQ(routed("sale.created"), "short");
    EXPECT_EQ(routed("sale"), "any");  // "sale.*" needs the dot
    EXPECT_EQ(routed("salesforce.sync"), "any");
    EXPECT_EQ(routed("sale.refund.full", "other"), "other");
    ++orders;
  } while (std::next_permutation(rules.begin(), rules.end()));
  EXPECT_EQ(orders, 24);
}

TEST_F(ConfigTest, UnroutableEventsAreNotFound) {
  absl::StatusOr<AgentConfig> config = Parse(
      OneDestination() + "routes { event_type: \"a.b\" destination: \"d\" }");
  ASSERT_OUTBOX_OK(config);
  EXPECT_STATUS_CODE(Route(*config, "a.c", ""), absl::StatusCode::kNotFound);
  EXPECT_STATUS_CODE(Route(*config, "a.b", "gone"),
                     absl::StatusCode::kNotFound);
  ASSERT_OUTBOX_OK(Route(*config, "a.b", ""));
}

TEST_F(ConfigTest, MissingConfigFileIsNotFound) {
  EXPECT_STATUS_CODE(LoadAgentConfig(dir_.Sub("absent.textproto")),
                     absl::StatusCode::kNotFound);
}

TEST_F(ConfigTest, ClassesBecomeStoreOptions) {
  absl::StatusOr<AgentConfig> config = Parse(OneDestination() + R"(
classes { name: "fiscal" event_types: "sale.*" event_types: "refund.*"
          priority: 9 fiscal: true }
classes { name: "telemetry" event_types: "telemetry.*" evictable: true
          max_pending_events: 50000 max_pending_bytes: 10485760
          on_full: "drop_oldest" keep_evicted: false expire_after: "6h" })");
  ASSERT_OUTBOX_OK(config);
  ASSERT_EQ(config->classes.size(), 2u);
  const EventClass& fiscal = config->classes[0];
  EXPECT_EQ(fiscal.name, "fiscal");
  EXPECT_EQ(fiscal.event_types,
            (std::vector<std::string>{"sale.*", "refund.*"}));
  EXPECT_EQ(fiscal.priority, 9);
  EXPECT_TRUE(fiscal.fiscal);
  EXPECT_TRUE(fiscal.keep_evicted);
  const EventClass& telemetry = config->classes[1];
  EXPECT_EQ(telemetry.on_full, EventClass::OnFull::kDropOldest);
  EXPECT_EQ(telemetry.max_pending_events, 50000u);
  EXPECT_EQ(telemetry.max_pending_bytes, 10485760u);
  EXPECT_FALSE(telemetry.keep_evicted);
  EXPECT_EQ(telemetry.expire_after, absl::Hours(6));
}

TEST_F(ConfigTest, AFiscalClassThatCouldBeEvictedIsRefusedWithItsLine) {
  EXPECT_THAT(ErrorOf(OneDestination() +
                      "classes { name: \"fiscal\" event_types: \"sale.*\"\n"
                      "  fiscal: true evictable: true on_full: "
                      "\"drop_oldest\" max_pending_events: 10 }\n"),
              AllOf(HasSubstr(Where(5) + "classes[0]"),
                    HasSubstr("a fiscal class is never evicted")));
  EXPECT_THAT(
      ErrorOf(OneDestination() + "classes { name: \"t\" event_types: \"t.*\" "
                                 "on_full: \"oldest\" }\n"),
      HasSubstr("must be \"reject\" or \"drop_oldest\""));
  EXPECT_THAT(ErrorOf(OneDestination() +
                      "classes { name: \"a\" event_types: \"t.*\" }\n"
                      "classes { name: \"b\" event_types: \"t.*\" }\n"),
              AllOf(HasSubstr(Where(6) + "classes[1]"),
                    HasSubstr("already in another class")));
}

TEST_F(ConfigTest, AWorkflowsTypeCannotBeInAnEvictableClass) {
  EXPECT_THAT(ErrorOf(OneDestination() +
                      "workflows { event_type: \"order.created\"\n"
                      "  steps { name: \"a\" destination: \"d\" } }\n"
                      "classes { name: \"orders\" event_types: \"order.*\"\n"
                      "  evictable: true expire_after: \"1h\" }\n"),
              HasSubstr("a workflow's events are never evicted nor expired"));
}

}  // namespace
}  // namespace outbox
