// Copyright (c) edge-outbox authors.
//
// Paths written "$CREDENTIALS_DIRECTORY/NAME": how the configuration names
// the copies of its secrets that systemd's LoadCredential= makes for the
// service (dist/outbox-agent.service.in). Part of agent_config_test.

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "agent/config/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kSecret =
    "whsec_" + absl::Base64Escape("key-C-0123456789abcdef0123456789");

// Sets or unsets CREDENTIALS_DIRECTORY for one test; restores it after.
class CredentialsConfigTest : public ::testing::Test {
 protected:
  CredentialsConfigTest() {
    const char* old = getenv("CREDENTIALS_DIRECTORY");
    if (old != nullptr) saved_ = old;
    std::filesystem::create_directories(creds_dir());
    std::filesystem::create_directories(dir_.Sub("etc"));
  }
  ~CredentialsConfigTest() override {
    if (saved_) {
      setenv("CREDENTIALS_DIRECTORY", saved_->c_str(), 1);
    } else {
      unsetenv("CREDENTIALS_DIRECTORY");
    }
  }

  // Where systemd would put the service's credentials: not the directory of
  // the configuration, so a relative path could not find them by chance.
  std::string creds_dir() const { return dir_.Sub("credentials"); }

  // A private (0400, as systemd makes them) file in the credentials dir.
  std::string WriteCredential(const std::string& name,
                              const std::string& text) {
    const std::string path = creds_dir() + "/" + name;
    std::ofstream(path) << text;
    EXPECT_EQ(chmod(path.c_str(), 0400), 0);
    return path;
  }

  // Parses a one-destination config, as if read from <temp>/etc/.
  absl::StatusOr<AgentConfig> Parse(const std::string& fields) {
    return ParseAgentConfig(
        "destinations {\n  name: \"d\"\n  url: \"https://h.example/x\"\n" +
            fields + "}\n",
        dir_.Sub("etc/agent.textproto"));
  }

  testing::TempDir dir_;
  std::optional<std::string> saved_;
};

TEST_F(CredentialsConfigTest, SecretsFileResolvesAgainstTheVariable) {
  const std::string path = WriteCredential("backend.whsec", kSecret + "\n");
  setenv("CREDENTIALS_DIRECTORY", creds_dir().c_str(), 1);
  absl::StatusOr<AgentConfig> config =
      Parse("secrets_file: \"$CREDENTIALS_DIRECTORY/backend.whsec\"\n");
  ASSERT_OUTBOX_OK(config.status());
  EXPECT_EQ(config->destinations[0].secrets_file, path);
  EXPECT_EQ(config->destinations[0].secrets.size(), 1u);
}

TEST_F(CredentialsConfigTest, BracedSpellingResolvesTheSame) {
  const std::string path = WriteCredential("backend.whsec", kSecret + "\n");
  setenv("CREDENTIALS_DIRECTORY", creds_dir().c_str(), 1);
  absl::StatusOr<AgentConfig> config =
      Parse("secrets_file: \"${CREDENTIALS_DIRECTORY}/backend.whsec\"\n");
  ASSERT_OUTBOX_OK(config.status());
  EXPECT_EQ(config->destinations[0].secrets_file, path);
}

TEST_F(CredentialsConfigTest, HeaderValueAndTlsFilesResolveAgainstIt) {
  WriteCredential("backend.auth", "Bearer t0ken\n");
  const std::string ca = WriteCredential("ca.pem", "not parsed here\n");
  setenv("CREDENTIALS_DIRECTORY", creds_dir().c_str(), 1);
  absl::StatusOr<AgentConfig> config = Parse(
      "header_files { key: \"Authorization\" value: "
      "\"$CREDENTIALS_DIRECTORY/backend.auth\" }\n"
      "tls { ca_file: \"$CREDENTIALS_DIRECTORY/ca.pem\" }\n");
  ASSERT_OUTBOX_OK(config.status());
  ASSERT_EQ(config->destinations[0].headers.size(), 1u);
  EXPECT_EQ(config->destinations[0].headers[0].second, "Bearer t0ken");
  EXPECT_EQ(config->destinations[0].tls.ca_file, ca);
}

TEST_F(CredentialsConfigTest, UnsetVariableIsAFailedPreconditionNamingField) {
  WriteCredential("backend.whsec", kSecret + "\n");
  unsetenv("CREDENTIALS_DIRECTORY");
  absl::StatusOr<AgentConfig> config =
      Parse("secrets_file: \"$CREDENTIALS_DIRECTORY/backend.whsec\"\n");
  ASSERT_EQ(config.status().code(), absl::StatusCode::kFailedPrecondition)
      << config.status();
  EXPECT_THAT(config.status().message(),
              HasSubstr("agent.textproto:4: destinations[0].secrets_file: "
                        "names $CREDENTIALS_DIRECTORY, which is not set"));
  EXPECT_THAT(config.status().message(), HasSubstr("LoadCredential="));
}

TEST_F(CredentialsConfigTest, UnsetVariableErrorForAValueFileOmitsThePath) {
  unsetenv("CREDENTIALS_DIRECTORY");
  absl::StatusOr<AgentConfig> config = Parse(
      "header_files { key: \"Authorization\" value: "
      "\"$CREDENTIALS_DIRECTORY/Bearer-t0ken\" }\n");
  ASSERT_EQ(config.status().code(), absl::StatusCode::kFailedPrecondition)
      << config.status();
  EXPECT_THAT(config.status().message(), HasSubstr("header \"Authorization\""));
  EXPECT_THAT(config.status().message(), Not(HasSubstr("t0ken")));
}

TEST_F(CredentialsConfigTest, OtherVariablesAreNotExpanded) {
  // Only the one systemd defines for credentials: "$HOME/x" stays a relative
  // path under the configuration's directory, as it always was.
  setenv("CREDENTIALS_DIRECTORY", creds_dir().c_str(), 1);
  absl::StatusOr<AgentConfig> config =
      Parse("secrets_file: \"$HOME/backend.whsec\"\n");
  ASSERT_EQ(config.status().code(), absl::StatusCode::kNotFound)
      << config.status();
  EXPECT_THAT(config.status().message(),
              HasSubstr(dir_.Sub("etc/$HOME/backend.whsec")));
}

}  // namespace
}  // namespace outbox
