// Copyright (c) edge-outbox authors.
//
// dist/agent.textproto, the configuration `cmake --install` puts where
// outbox-agent.service reads it: loaded with the agent's own loader, as the
// service would (its secret under $CREDENTIALS_DIRECTORY), so the example
// cannot go stale. It promises every field written out with its default;
// these tests hold it to that, including for fields added later.

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/config/config.h"
#include "gtest/gtest.h"
#include "proto/agent_config.pb.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

constexpr char kExample[] = OUTBOX_DIST_DIR "/agent.textproto";

// Loads the example with CREDENTIALS_DIRECTORY pointing at a scratch
// directory that holds its one credential, as systemd would provide it.
class ExampleConfigTest : public ::testing::Test {
 protected:
  ExampleConfigTest() {
    const char* old = getenv("CREDENTIALS_DIRECTORY");
    if (old != nullptr) saved_ = old;
    const std::string secret = dir_.Sub("backend.whsec");
    std::ofstream(secret) << "whsec_"
                          << absl::Base64Escape("device-key-0123456789abcdef")
                          << "\n";
    EXPECT_EQ(chmod(secret.c_str(), 0400), 0);  // as systemd makes it
    setenv("CREDENTIALS_DIRECTORY", dir_.path().c_str(), 1);
  }
  ~ExampleConfigTest() override {
    if (saved_) {
      setenv("CREDENTIALS_DIRECTORY", saved_->c_str(), 1);
    } else {
      unsetenv("CREDENTIALS_DIRECTORY");
    }
  }

  testing::TempDir dir_;
  std::optional<std::string> saved_;
};

TEST_F(ExampleConfigTest, LoadsWithTheServicesCredential) {
  absl::StatusOr<AgentConfig> config = LoadAgentConfig(kExample);
  ASSERT_OUTBOX_OK(config.status());
  ASSERT_EQ(config->destinations.size(), 1u);
  const Destination& backend = config->destinations[0];
  EXPECT_EQ(backend.name, "backend");
  EXPECT_EQ(backend.secrets_file, dir_.Sub("backend.whsec"));
  EXPECT_EQ(backend.secrets.size(), 1u);
  absl::StatusOr<const Destination*> routed =
      Route(*config, "sale.created", "");
  ASSERT_OUTBOX_OK(routed.status());
  EXPECT_EQ((*routed)->name, "backend");
}

TEST_F(ExampleConfigTest, EveryValueWrittenIsTheDefault) {
  absl::StatusOr<AgentConfig> config = LoadAgentConfig(kExample);
  ASSERT_OUTBOX_OK(config.status());
  const Destination defaults;
  const Destination& d = config->destinations[0];
  EXPECT_EQ(d.connect_timeout, defaults.connect_timeout);
  EXPECT_EQ(d.timeout, defaults.timeout);
  EXPECT_TRUE(d.headers.empty());
  EXPECT_EQ(d.proxy, defaults.proxy);
  EXPECT_EQ(d.tls.verify_peer, defaults.tls.verify_peer);
  EXPECT_EQ(d.tls.verify_host, defaults.tls.verify_host);
  EXPECT_EQ(d.tls.ca_file, defaults.tls.ca_file);
  EXPECT_EQ(d.tls.ca_dir, defaults.tls.ca_dir);
  EXPECT_EQ(d.tls.client_cert_file, defaults.tls.client_cert_file);
  EXPECT_EQ(d.tls.client_key_file, defaults.tls.client_key_file);

  const RetryPolicy retry;
  const RetryPolicy* const both[] = {&config->retry, &d.retry};
  for (const RetryPolicy* r : both) {
    EXPECT_EQ(r->base_delay, retry.base_delay);
    EXPECT_EQ(r->max_delay, retry.max_delay);
    EXPECT_EQ(r->max_attempts, retry.max_attempts);
    EXPECT_EQ(r->max_age, retry.max_age);
    EXPECT_EQ(r->max_retry_after, retry.max_retry_after);
  }

  const AgentSettings agent;
  EXPECT_EQ(config->agent.max_in_flight, agent.max_in_flight);
  EXPECT_EQ(config->agent.probe_interval_min, agent.probe_interval_min);
  EXPECT_EQ(config->agent.probe_interval_max, agent.probe_interval_max);
  EXPECT_EQ(config->agent.idempotency_purge_interval,
            agent.idempotency_purge_interval);
  EXPECT_EQ(config->agent.dead_letter_retention, agent.dead_letter_retention);
  EXPECT_EQ(config->agent.ack_sync_interval, agent.ack_sync_interval);
  EXPECT_EQ(config->agent.memory_profile, agent.memory_profile);
  EXPECT_EQ(config->agent.workflow_response_bytes,
            agent.workflow_response_bytes);
  EXPECT_EQ(config->agent.result_body_bytes, agent.result_body_bytes);
  EXPECT_EQ(config->agent.workflow_retention, agent.workflow_retention);
  EXPECT_EQ(config->agent.workflow_rows, agent.workflow_rows);
}

// Appends to `missing` every field of `descriptor` (and of the messages it
// contains) that `text` does not write, or show in a comment, as
// "name:" or "name {".
void FindUnmentioned(const google::protobuf::Descriptor* descriptor,
                     const std::string& text, const std::string& path,
                     std::vector<std::string>* missing) {
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    const std::regex written("\\b" + field->name() + "\\s*[:{]");
    if (!std::regex_search(text, written)) {
      missing->push_back(path + field->name());
    }
    if (field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE &&
        !field->is_map()) {
      FindUnmentioned(field->message_type(), text, path + field->name() + ".",
                      missing);
    }
  }
}

TEST(ExampleConfigText, MentionsEveryFieldOfTheSchema) {
  std::ifstream in(kExample);
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty()) << kExample;
  std::vector<std::string> missing;
  FindUnmentioned(config::AgentConfig::descriptor(), text.str(), "", &missing);
  EXPECT_TRUE(missing.empty())
      << "dist/agent.textproto does not show these fields of "
         "proto/agent_config.proto with their defaults: "
      << absl::StrJoin(missing, ", ");
}

}  // namespace
}  // namespace outbox
