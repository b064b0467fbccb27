// Copyright (c) edge-outbox authors.
//
// The metrics end to end, with the real programs: outbox-agent delivers a
// store's committed events to the real outbox-sink and writes its
// metrics_file; `outboxctl stats --prometheus` prints the store's part. Both
// texts are read by the official Prometheus client's parser
// (parse_prometheus.py, python3-prometheus-client), and what it read is
// checked against `outboxctl stats --json` and against what the sink
// received. Without the Python module the test skips, or fails where
// OUTBOX_REQUIRE names "prometheus-client" (CI: OUTBOX_REQUIRE=all).

#include <sys/stat.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "outbox/store.h"
#include "platform/child_process.h"
#include "platform/reserved_port.h"
#include "tests/testing/events.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/skip.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"
#include "tests/testing/temp_dir.h"
#include "tools/json_fields.h"

namespace outbox {
namespace {

using testing::MakeEvent;
using testing::TargetCommand;

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr int kSales = 20;    // to the sink: delivered
constexpr int kRejected = 3;  // answered 422: dead-lettered by the agent
constexpr int kHeld = 2;      // to a port that refuses: stay pending
constexpr int kUnrouted = 2;  // no route takes them: held, not dead

class MetricsEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    secret_ = dir_.Sub("secret");
    std::ofstream(secret_) << kSecret << "\n";
    ASSERT_EQ(chmod(secret_.c_str(), 0600), 0);
    auto sink = sink::SinkProcess::Start(
        TargetCommand(OUTBOX_SINK_BINARY, {"--secret-file", secret_, "--log",
                                           dir_.Sub("sink.log")}),
        dir_.path());
    ASSERT_OUTBOX_OK(sink);
    sink_ = std::move(*sink);
    auto refusing = ReservedPort::Reserve();  // bound, never listening
    ASSERT_OUTBOX_OK(refusing);
    refusing_ = std::move(*refusing);
    CommitEvents();
    std::filesystem::create_directories(dir_.Sub("metrics"));
  }

  void TearDown() override {
    if (sink_ != nullptr) sink_->Stop().IgnoreError();
  }

  void CommitEvents() {
    Options options;
    options.tables = {"sales"};
    auto store = Store::Open(options, db());
    ASSERT_OUTBOX_OK(store);
    auto commit = [&](const std::string& type, int i) {
      Txn txn;
      txn.Put("sales", absl::StrCat(type, "-", i), "x");
      txn.Emit(MakeEvent(type, "", absl::StrCat("{\"n\":", i, "}")));
      ASSERT_OUTBOX_OK((*store)->Commit(txn));
    };
    for (int i = 0; i < kSales; ++i) commit("sale.created", i);
    for (int i = 0; i < kRejected; ++i) commit("other.thing", i);
    for (int i = 0; i < kUnrouted; ++i) commit("stray.thing", i);
    for (int i = 0; i < kHeld; ++i) commit("audit.entry", i);
    ASSERT_OUTBOX_OK((*store)->Close());
  }

  std::string db() const { return dir_.Sub("db"); }
  std::string metrics_file() const { return dir_.Sub("metrics/outbox.prom"); }

  std::string WriteConfig() const {
    const std::string path = dir_.Sub("agent.textproto");
    std::ofstream(path) << absl::StrCat(
        "destinations { name: \"sink\" url: \"http://127.0.0.1:", sink_->port(),
        "/hook\" secrets_file: \"", secret_, "\" }\n",
        "destinations { name: \"refusing\" url: \"http://127.0.0.1:",
        refusing_->port(), "/hook\" }\n",
        "destinations { name: \"rejecting\" url: \"http://127.0.0.1:",
        sink_->port(), "/status/422\" secrets_file: \"", secret_, "\" }\n",
        "routes { event_type: \"other.*\" destination: \"rejecting\" }\n",
        "routes { event_type: \"sale.*\" destination: \"sink\" }\n",
        "routes { event_type: \"audit.*\" destination: \"refusing\" }\n",
        "agent { metrics_file: \"", metrics_file(),
        "\" metrics_interval: \"100ms\" }\n");
    return path;
  }

  // The agent's file once it shows every event where it ends up.
  bool WaitForSettledFile(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    const std::vector<std::string> settled = {
        absl::StrCat("outbox_delivered_total ", kSales),
        absl::StrCat("outbox_dead_letters ", kRejected),
        absl::StrCat("outbox_pending_events ", kHeld + kUnrouted),
        "outbox_unrouted_types 1",
        "outbox_destination_reachable{destination=\"refusing\"} 0"};
    while (absl::Now() < deadline) {
      std::set<std::string> lines;
      for (std::string& l : sink::ReadLines(metrics_file())) lines.insert(l);
      bool all = true;
      for (const std::string& want : settled) all = all && lines.count(want);
      if (all) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  }

  // What the Prometheus client's parser read from `path`; a failure if it
  // refused the text. Sets missing_python_ when the module is absent.
  nlohmann::json Parse(const std::string& path) {
    absl::StatusOr<sink::ExitResult> r =
        sink::RunToExit("/usr/bin/python3", dir_.path(),
                        {OUTBOX_PARSE_PROMETHEUS, path}, absl::Seconds(60));
    EXPECT_OUTBOX_OK(r);
    if (!r.ok()) return nlohmann::json::object();
    if (r->exit_code == 3) missing_python_ = r->err;
    EXPECT_TRUE(r->exit_code == 0 || r->exit_code == 3)
        << path << " was refused:\n"
        << r->err;
    auto parsed = nlohmann::json::parse(r->out, nullptr, false);
    return parsed.is_discarded() ? nlohmann::json::object() : parsed;
  }

  sink::ExitResult Ctl(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--db", db()};
    all.insert(all.end(), args.begin(), args.end());
    absl::StatusOr<sink::ExitResult> r =
        sink::RunToExit(OUTBOX_CTL_BINARY, dir_.path(), all);
    EXPECT_OUTBOX_OK(r);
    return r.ok() ? *r : sink::ExitResult();
  }

  testing::TempDir dir_;
  std::string secret_;
  std::unique_ptr<sink::SinkProcess> sink_;
  std::unique_ptr<ReservedPort> refusing_;
  std::string missing_python_;
};

using ::testing::HasSubstr;

double Value(const nlohmann::json& parsed, const std::string& sample) {
  const nlohmann::json& samples = parsed["samples"];
  if (!samples.contains(sample)) {
    ADD_FAILURE() << "no sample " << sample;
    return -1;
  }
  const nlohmann::json& value = samples[sample];
  if (value.is_string()) {  // what JSON cannot hold: "+Inf", "-Inf", "NaN"
    return value == "+Inf"   ? std::numeric_limits<double>::infinity()
           : value == "-Inf" ? -std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::quiet_NaN();
  }
  return value.get<double>();
}

TEST_F(MetricsEndToEndTest, AgentFileAndOutboxctlAgreeWithStatsAndTheSink) {
  auto agent = ChildProcess::StartToFiles(
      TargetCommand(OUTBOX_AGENT_BINARY,
                    {"--db", db(), "--config", WriteConfig()}),
      dir_.Sub("agent.out"), dir_.Sub("agent.err"));
  ASSERT_OUTBOX_OK(agent);
  const bool settled = WaitForSettledFile(absl::Seconds(60));
  ASSERT_OUTBOX_OK((*agent)->Signal(SIGTERM));
  ASSERT_EQ((*agent)->Wait(absl::Now() + absl::Seconds(30)), 0);
  ASSERT_TRUE(settled) << "the metrics file never showed the settled store";
  // Written once more as the agent stopped: the final figures.

  // The drain ETA, read back from the agent's file: the sink's events are
  // all delivered; the refusing destination's wait and none move.
  sink::ExitResult eta = Ctl({"stats", "--agent-metrics", metrics_file()});
  ASSERT_EQ(eta.exit_code, 0) << eta.err;
  EXPECT_THAT(eta.out, HasSubstr("drain eta, sink:     drained\n"));
  EXPECT_THAT(eta.out,
              HasSubstr(absl::StrCat("drain eta, refusing: stalled: ", kHeld,
                                     " pending, none delivered")));

  const nlohmann::json file = Parse(metrics_file());
  sink::ExitResult prometheus = Ctl({"stats", "--prometheus"});
  ASSERT_EQ(prometheus.exit_code, 0) << prometheus.err;
  std::ofstream(dir_.Sub("ctl.prom")) << prometheus.out;
  const nlohmann::json ctl = Parse(dir_.Sub("ctl.prom"));
  if (!missing_python_.empty()) {
    OUTBOX_SKIP_WITHOUT("prometheus-client", missing_python_);
  }
  sink::ExitResult json = Ctl({"stats", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json stats = nlohmann::json::parse(json.out);

  // The store's part: the same in the file, in outboxctl's text, and in
  // outboxctl stats --json.
  for (const auto& [sample, field] :
       std::vector<std::pair<std::string, std::string>>{
           {"outbox_pending_events", "pending_events"},
           {"outbox_pending_bytes", "pending_bytes"},
           {"outbox_dead_letters", "dead_letters"},
           {"outbox_delivered_total", "delivered_total"},
           {"outbox_dead_letters_purged_total", "dead_letters_purged"}}) {
    SCOPED_TRACE(sample);
    EXPECT_EQ(Value(file, sample), stats[field].get<double>());
    EXPECT_EQ(Value(ctl, sample), stats[field].get<double>());
  }
  EXPECT_EQ(stats["pending_events"], kHeld + kUnrouted);
  EXPECT_EQ(stats["dead_letters"], kRejected);
  EXPECT_GT(Value(file, "outbox_store_disk_bytes"), 0);
  EXPECT_GT(Value(ctl, "outbox_store_disk_bytes"), 0);
  // outboxctl prints the store's families only, as the agent names them.
  ASSERT_FALSE(ctl["families"].empty());
  for (const auto& [name, family] : ctl["families"].items()) {
    EXPECT_EQ(file["families"][name], family) << name;
  }
  EXPECT_FALSE(ctl["families"].contains("outbox_attempts"));

  // The agent's part against what the sink received: one 2xx per sale.
  std::set<std::string> ids;
  int answered_2xx = 0;
  for (const std::string& line : sink::ReadLines(dir_.Sub("sink.log"))) {
    int status = 0;
    (void)absl::SimpleAtoi(JsonField(line, "status").value_or(""), &status);
    if (status / 100 != 2) continue;  // the rejected ones
    ++answered_2xx;
    ids.insert(JsonString(line, "id"));
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kSales));
  EXPECT_EQ(Value(file, "outbox_attempts_total{outcome=\"2xx\"}"),
            answered_2xx);
  EXPECT_EQ(Value(file, "outbox_delivered_total"), ids.size());
  EXPECT_EQ(Value(file, "outbox_delivery_latency_seconds_count"), kSales);
  for (const char* outcome :
       {"retryable_status", "timeout", "connection", "410"}) {
    EXPECT_EQ(Value(file, absl::StrCat("outbox_attempts_total{outcome=\"",
                                       outcome, "\"}")),
              0)
        << outcome;
  }
  EXPECT_EQ(Value(file, "outbox_attempts_total{outcome=\"4xx\"}"), kRejected);
  EXPECT_EQ(Value(file, "outbox_dead_lettered_total{reason=\"rejected\"}"),
            kRejected);
  EXPECT_EQ(Value(file, "outbox_unrouted_types"), 1);
  EXPECT_EQ(Value(file, "outbox_destination_reachable{destination=\"sink\"}"),
            1);
  EXPECT_EQ(
      Value(file, "outbox_destination_reachable{destination=\"refusing\"}"), 0);
  EXPECT_GT(Value(file,
                  "outbox_destination_unreachable_seconds_total{destination="
                  "\"refusing\"}"),
            0);
  EXPECT_EQ(Value(file, "outbox_in_flight_requests"), 0);
  // The drain ETA: the refusing destination's events wait and none move.
  EXPECT_EQ(
      Value(file,
            "outbox_destination_pending_events{destination=\"refusing\"}"),
      kHeld);
  EXPECT_TRUE(std::isinf(
      Value(file, "outbox_drain_eta_seconds{destination=\"refusing\"}")));
  EXPECT_EQ(Value(file, "outbox_drain_eta_seconds{destination=\"sink\"}"), 0);
  // A standalone agent commits nothing: its commit histogram is empty.
  EXPECT_EQ(Value(file, "outbox_commit_duration_seconds_count"), 0);
}

}  // namespace
}  // namespace outbox
