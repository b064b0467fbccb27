// Copyright (c) edge-outbox authors.

#include "tests/testing/agent_fixture.h"

#include <sys/stat.h>

#include <fstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"
#include "tools/json_fields.h"

namespace outbox::testing {
void AgentSinkTest::SetUp() {
  log_path_ = dir_.Sub("sink.log");
  secret_path_ = SecretFile(kSecret);
  Options options;
  options.tables = {"sales"};
  auto store = Store::Open(options, dir_.Sub("db"));
  ASSERT_OUTBOX_OK(store);
  store_ = std::move(*store);
}

void AgentSinkTest::TearDown() {
  StopSink();
  if (::testing::Test::HasFailure()) {
    for (const LogRecord& r : agent_log_) {
      std::cerr << "agent: " << LogEventName(r.event) << ": " << r.message
                << "\n";
    }
  }
}

std::string AgentSinkTest::SecretFile(const std::string& secret) const {
  static int counter = 0;
  const std::string path = dir_.Sub(absl::StrCat("secret-", counter++));
  std::ofstream(path) << secret << "\n";
  chmod(path.c_str(), 0600);
  return path;
}

void AgentSinkTest::StartSink(const std::vector<std::string>& args, int port) {
  std::vector<std::string> all = {"--secret-file", secret_path_, "--log",
                                  log_path_};
  all.insert(all.end(), args.begin(), args.end());
  auto sink = sink::SinkProcess::Start(TargetCommand(OUTBOX_SINK_BINARY, all),
                                       dir_.path(), absl::Seconds(10), port);
  ASSERT_OUTBOX_OK(sink);
  sink_ = std::move(*sink);
  port_ = sink_->port();
}

void AgentSinkTest::StopSink() {
  if (sink_ != nullptr) sink_->Stop().IgnoreError();
  sink_.reset();
}

std::vector<SinkLine> AgentSinkTest::SinkLog() const {
  std::vector<SinkLine> out;
  for (const std::string& line : sink::ReadLines(log_path_)) {
    SinkLine l;
    l.id = JsonString(line, "id");
    l.path = JsonString(line, "path");
    l.body = JsonString(line, "body");
    l.duplicate = JsonField(line, "duplicate") == "true";
    l.signature_valid = JsonField(line, "signature_valid") == "true";
    l.signature_error = JsonString(line, "signature_error");
    l.dropped = JsonString(line, "action") == "drop";
    (void)absl::SimpleAtoi(JsonField(line, "status").value_or(""), &l.status);
    (void)absl::SimpleAtoi(JsonField(line, "ts_ms").value_or(""), &l.ts_ms);
    out.push_back(std::move(l));
  }
  return out;
}

std::string AgentSinkTest::Config(const std::string& path,
                                  const std::string& extra,
                                  const std::string& destination_extra) const {
  return absl::StrCat(R"(
    destinations {
      name: "sink"
      url: "http://127.0.0.1:)",
                      port_, path, R"("
      secrets_file: ")",
                      secret_path_, R"("
      connect_timeout: "2s"
      timeout: "10s"
      )",
                      destination_extra, R"(
    }
    routes { event_type: "*" destination: "sink" }
    retry { base_delay: "50ms" max_delay: "400ms" }
    agent { probe_interval_min: "100ms" probe_interval_max: "1s" }
  )",
                      extra);
}

int PayloadN(const std::string& body) {
  const size_t at = body.find("\"n\":");
  int n = -1;
  if (at != std::string::npos) {
    (void)absl::SimpleAtoi(body.substr(at + 4, body.find('}', at) - at - 4),
                           &n);
  }
  return n;
}

uint64_t AgentSinkTest::DrainUntilEmpty(Agent* agent, int rounds) {
  uint64_t pending = 0;
  for (int i = 0; i < rounds; ++i) {
    auto drained = agent->Drain();
    EXPECT_TRUE(drained.ok()) << drained.status();
    pending = drained.ok() ? *drained : ~uint64_t{0};
    if (pending == 0) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return pending;
}

std::unique_ptr<Agent> AgentSinkTest::MakeAgent(const std::string& config,
                                                Clock* clock) {
  AgentOptions options;
  options.config_text = config;
  options.clock = clock;
  options.log = [this](const LogRecord& r) { agent_log_.push_back(r); };
  auto agent = Agent::Create(store_.get(), std::move(options));
  EXPECT_TRUE(agent.ok()) << agent.status();
  return agent.ok() ? std::move(*agent) : nullptr;
}

std::vector<std::string> AgentSinkTest::CommitEvents(int n, int keys,
                                                     const std::string& type) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    Txn txn;
    const std::string key = keys > 0 ? absl::StrCat("k", i % keys) : "";
    Event e;
    e.type = type;
    e.ordering_key = key;
    e.payload = absl::StrCat(R"({"key":")", key, R"(","n":)", i, "}");
    ids.push_back(txn.Emit(e));
    txn.Put("sales", absl::StrCat("sale-", ids.back()), e.payload);
    auto result = store_->Commit(txn);
    EXPECT_TRUE(result.ok()) << result.status();
  }
  return ids;
}

}  // namespace outbox::testing
