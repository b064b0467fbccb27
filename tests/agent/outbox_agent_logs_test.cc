// Copyright (c) edge-outbox authors.
//
// The real outbox-agent's log lines, in both --log-format values, against
// the real outbox-sink. One run per format drives the agent through every
// kind of outcome: 2xx, 503 until it gives up (a dead letter), 410 (a paused
// destination), connection refused (an unreachable destination with a
// backlog, which then comes up) and an event no route takes (a dead letter).
// Payloads, header values and the signing secret carry marker strings.
//
// Invariants checked: no marker appears anywhere in the agent's stdout or
// stderr; every JSON line parses and has ts, level, event and msg; each
// state change is logged with its event id and destination; a backlog held
// for an unreachable destination logs one line, not one per event.

#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "outbox/log.h"
#include "outbox/store.h"
#include "platform/child_process.h"
#include "platform/reserved_port.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/text_files.h"
#include "tools/json_fields.h"

namespace outbox {
namespace {

using testing::Count;
using testing::ReadFile;
using testing::WaitUntil;
using testing::WritePrivate;

constexpr char kPayloadMarker[] = "PAYLOAD-MARKER-7f3a";
constexpr char kHeaderMarker[] = "HEADER-MARKER-19c2";
constexpr char kHeaderFileMarker[] = "HEADERFILE-MARKER-55d0";
constexpr char kSecretBytes[] = "SECRET-MARKER-a8e1-signing-key";
constexpr int kHeld = 50;  // events for the destination that is down

// What one run of outbox-agent printed, and the ids of what it was given.
struct AgentRun {
  std::string out, err;
  int exit_code = -1;
  std::string failure;  // why the run could not be completed, if it was not
  std::string secret;   // the whsec_ line, for the marker search
  std::vector<std::string> ok_ids, held_ids;
  std::string flaky_id, gone_id, orphan_id;
};

std::string Config(const testing::TempDir& dir, int sink_port, int down_port) {
  const std::string sink = absl::StrCat("http://127.0.0.1:", sink_port);
  return absl::StrCat(R"(
    destinations {
      name: "main" url: ")",
                      sink, R"(/ok" secrets_file: ")", dir.Sub("secret"), R"("
      headers { key: "X-Device" value: ")",
                      kHeaderMarker, R"(" }
      header_files { key: "Authorization" value: ")",
                      dir.Sub("auth"), R"(" }
    }
    destinations {
      name: "flaky" url: ")",
                      sink, R"(/status/503"
      secrets_file: ")",
                      dir.Sub("secret"), R"("
      retry { base_delay: "20ms" max_delay: "40ms" max_attempts: 2 }
    }
    destinations { name: "gone" url: ")",
                      sink, R"(/status/410" }
    destinations {
      name: "down" url: "http://127.0.0.1:)",
                      down_port, R"(/"
      secrets_file: ")",
                      dir.Sub("secret"), R"("
      headers { key: "X-Device" value: ")",
                      kHeaderMarker, R"(" }
    }
    routes { event_type: "t.ok" destination: "main" }
    routes { event_type: "t.flaky" destination: "flaky" }
    routes { event_type: "t.gone" destination: "gone" }
    routes { event_type: "t.down" destination: "down" }
    agent { probe_interval_min: "50ms" probe_interval_max: "200ms" }
  )");
}

std::string Commit(Store* store, const std::string& type, int n) {
  Txn txn;
  Event e;
  e.type = type;
  e.payload = absl::StrCat(R"({"card":")", kPayloadMarker, "-", n, R"("})");
  const std::string id = txn.Emit(e);
  txn.Put("sales", absl::StrCat("sale-", n), e.payload);
  absl::StatusOr<CommitResult> result = store->Commit(txn);
  EXPECT_TRUE(result.ok()) << result.status();
  return id;
}

void CommitAll(const std::string& db, AgentRun* run) {
  Options options;
  options.tables = {"sales"};
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options, db);
  ASSERT_OUTBOX_OK(store);
  int n = 0;
  for (int i = 0; i < 3; ++i)
    run->ok_ids.push_back(Commit(store->get(), "t.ok", n++));
  run->flaky_id = Commit(store->get(), "t.flaky", n++);
  run->gone_id = Commit(store->get(), "t.gone", n++);
  run->orphan_id = Commit(store->get(), "t.orphan", n++);  // no route: held
  for (int i = 0; i < kHeld; ++i) {
    run->held_ids.push_back(Commit(store->get(), "t.down", n++));
  }
  ASSERT_OUTBOX_OK((*store)->Close());
}

// Starts the receiver (and later the destination that was down), the agent
// in `format`, waits for each outcome, then SIGTERMs the agent. Every
// process it started is stopped when it returns.
void Drive(const testing::TempDir& dir, const std::string& format,
           AgentRun* run) {
  run->secret = "whsec_" + absl::Base64Escape(kSecretBytes);
  WritePrivate(dir.Sub("secret"), run->secret);
  WritePrivate(dir.Sub("auth"), absl::StrCat("Bearer ", kHeaderFileMarker));
  const std::vector<std::string> sink_args = {
      "--secret-file", dir.Sub("secret"), "--log", dir.Sub("sink.log")};
  auto sink = sink::SinkProcess::Start(
      testing::TargetCommand(OUTBOX_SINK_BINARY, sink_args), dir.path());
  ASSERT_OUTBOX_OK(sink);
  auto down = ReservedPort::Reserve();  // connections refused until released
  ASSERT_OUTBOX_OK(down);
  ASSERT_NO_FATAL_FAILURE(CommitAll(dir.Sub("db"), run));
  std::ofstream(dir.Sub("agent.textproto"))
      << Config(dir, (*sink)->port(), (*down)->port());

  auto agent = ChildProcess::StartToFiles(
      testing::TargetCommand(
          OUTBOX_AGENT_BINARY,
          {"--db", dir.Sub("db"), "--config", dir.Sub("agent.textproto"),
           "--log-format", format}),
      dir.Sub("agent.out"), dir.Sub("agent.err"));
  ASSERT_OUTBOX_OK(agent);
  const std::string err_path = dir.Sub("agent.err");
  auto logged = [&](const std::string& id, const std::string& phrase) {
    for (const std::string& line : sink::ReadLines(err_path)) {
      if (absl::StrContains(line, id) && absl::StrContains(line, phrase)) {
        return true;
      }
    }
    return false;
  };
  const bool outcomes = WaitUntil([&] {
    return logged(run->flaky_id, "dead-lettered") &&
           logged(run->orphan_id, "held with every event of its type") &&
           logged(run->gone_id, "paused") &&
           logged("destination down", "unreachable") &&
           Count(ReadFile(dir.Sub("sink.log")), "\"status\":200") == 3;
  });
  if (!outcomes) run->failure = "the outcomes were not all logged";

  // The destination that was down comes up: its backlog goes out.
  (*down)->Release();
  auto second = sink::SinkProcess::Start(
      testing::TargetCommand(
          OUTBOX_SINK_BINARY,
          {"--secret-file", dir.Sub("secret"), "--log", dir.Sub("down.log")}),
      dir.Sub("down"), absl::Seconds(10), (*down)->port());
  if (second.ok()) {
    const bool drained = WaitUntil(
        [&] { return sink::ReadLines(dir.Sub("down.log")).size() >= kHeld; });
    if (!drained && run->failure.empty()) run->failure = "backlog not drained";
  } else if (run->failure.empty()) {
    run->failure = second.status().ToString();
  }
  EXPECT_OUTBOX_OK((*agent)->Signal(SIGTERM));
  run->exit_code = (*agent)->Wait(absl::Now() + absl::Seconds(30));
  if (second.ok()) (*second)->Stop().IgnoreError();
  (*sink)->Stop().IgnoreError();
  run->out = ReadFile(dir.Sub("agent.out"));
  run->err = ReadFile(err_path);
}

// One run per format, shared by the tests of that format.
const AgentRun& RunFor(const std::string& format) {
  static std::map<std::string, AgentRun>* runs =
      new std::map<std::string, AgentRun>;
  auto it = runs->find(format);
  if (it != runs->end()) return it->second;
  AgentRun& run = (*runs)[format];
  testing::TempDir dir;
  mkdir(dir.Sub("down").c_str(), 0700);
  Drive(dir, format, &run);
  return run;
}

std::vector<nlohmann::json> JsonLines(const std::string& err) {
  std::vector<nlohmann::json> lines;
  size_t start = 0;
  while (start < err.size()) {
    size_t end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    lines.push_back(nlohmann::json::parse(err.substr(start, end - start),
                                          nullptr, /*allow_exceptions=*/false));
    start = end + 1;
  }
  return lines;
}

// The JSON records of `event` (by name).
std::vector<nlohmann::json> Records(const AgentRun& run,
                                    const std::string& event) {
  std::vector<nlohmann::json> found;
  for (const nlohmann::json& j : JsonLines(run.err)) {
    if (j.is_object() && j.value("event", "") == event) found.push_back(j);
  }
  return found;
}

// How many lines of the agent's stderr contain `what` (and `also`).
size_t LinesWith(const AgentRun& run, const std::string& what,
                 const std::string& also = "") {
  size_t count = 0;
  for (absl::string_view line : absl::StrSplit(run.err, '\n')) {
    count += absl::StrContains(line, what) && absl::StrContains(line, also);
  }
  return count;
}

class OutboxAgentLogsTest : public ::testing::TestWithParam<std::string> {
 protected:
  const AgentRun& Run() {
    const AgentRun& run = RunFor(GetParam());
    EXPECT_EQ(run.failure, "") << "agent stderr:\n" << run.err;
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run;
  }
};

TEST_P(OutboxAgentLogsTest, NoPayloadHeaderOrSecretIsPrinted) {
  const AgentRun& run = Run();
  ASSERT_FALSE(run.err.empty());
  const std::string base64 = run.secret.substr(6);
  for (const std::string& marker :
       {std::string(kPayloadMarker), std::string(kHeaderMarker),
        std::string(kHeaderFileMarker), std::string(kSecretBytes), base64}) {
    EXPECT_FALSE(absl::StrContains(run.err, marker))
        << marker << " in stderr:\n"
        << run.err;
    EXPECT_FALSE(absl::StrContains(run.out, marker))
        << marker << " in stdout:\n"
        << run.out;
  }
}

TEST_P(OutboxAgentLogsTest, HeldBacklogLogsOneLineNotOnePerEvent) {
  const AgentRun& run = Run();
  EXPECT_EQ(LinesWith(run, "destination down unreachable"), 1u) << run.err;
  EXPECT_EQ(LinesWith(run, "destination down reachable again"), 1u) << run.err;
  for (const std::string& id : run.held_ids) {
    // At most the request that found it down and the probe that found it
    // up again name one of its events.
    EXPECT_LE(LinesWith(run, id), 2u) << id << " in:\n" << run.err;
  }
}

TEST_P(OutboxAgentLogsTest, StateChangesNameTheirEvent) {
  const AgentRun& run = Run();
  EXPECT_EQ(LinesWith(run, run.flaky_id, "failed (HTTP 503"), 1u) << run.err;
  EXPECT_EQ(LinesWith(run, run.flaky_id, "dead-lettered"), 1u) << run.err;
  EXPECT_EQ(LinesWith(run, run.orphan_id, "held with every event of its type"),
            1u)
      << run.err;
  EXPECT_EQ(LinesWith(run, run.orphan_id, "dead-lettered:"), 0u) << run.err;
  EXPECT_EQ(LinesWith(run, run.gone_id, "destination gone paused"), 1u)
      << run.err;
  EXPECT_EQ(LinesWith(run, "destination down unreachable sending event"), 1u)
      << run.err;
  EXPECT_EQ(LinesWith(run, "destination down reachable again (event"), 1u)
      << run.err;
}

INSTANTIATE_TEST_SUITE_P(Formats, OutboxAgentLogsTest,
                         ::testing::Values("text", "json"));

class OutboxAgentJsonLogsTest : public ::testing::Test {
 protected:
  const AgentRun& Run() {
    const AgentRun& run = RunFor("json");
    EXPECT_EQ(run.failure, "") << "agent stderr:\n" << run.err;
    return run;
  }
};

TEST_F(OutboxAgentJsonLogsTest, EveryLineParsesWithTheRequiredFields) {
  const AgentRun& run = Run();
  std::set<std::string> names;
  for (LogEvent e : AllLogEvents()) names.emplace(LogEventName(e));
  const std::vector<nlohmann::json> lines = JsonLines(run.err);
  ASSERT_FALSE(lines.empty());
  for (const nlohmann::json& j : lines) {
    ASSERT_TRUE(j.is_object()) << run.err;
    for (const char* field : {"ts", "level", "event", "msg"}) {
      ASSERT_TRUE(j.contains(field) && j[field].is_string())
          << field << " missing in " << j.dump();
    }
    absl::Time ts;
    std::string why;
    EXPECT_TRUE(absl::ParseTime("%Y-%m-%dT%H:%M:%E3SZ",
                                j["ts"].get<std::string>(), &ts, &why))
        << j.dump() << ": " << why;
    EXPECT_TRUE(
        absl::StrContains("info warning error", j["level"].get<std::string>()));
    EXPECT_TRUE(names.count(j["event"].get<std::string>())) << j.dump();
  }
}

TEST_F(OutboxAgentJsonLogsTest, StartAndStopAreLogged) {
  const AgentRun& run = Run();
  const std::vector<nlohmann::json> lines = JsonLines(run.err);
  ASSERT_FALSE(lines.empty());
  const std::vector<nlohmann::json> opened = Records(run, "store_opened");
  ASSERT_EQ(opened.size(), 1u) << run.err;
  EXPECT_TRUE(absl::StrContains(opened[0].value("msg", ""),
                                absl::StrCat(6 + kHeld, " event(s) pending")))
      << opened[0].dump();
  EXPECT_EQ(Records(run, "agent_started").size(), 1u);
  EXPECT_EQ(Records(run, "agent_stopped").size(), 1u);
  EXPECT_EQ(lines.back().value("event", ""), "agent_exit");
}

// The one record of `event` about event `id`, or null.
nlohmann::json Find(const AgentRun& run, const std::string& event,
                    const std::string& id) {
  for (const nlohmann::json& j : Records(run, event)) {
    if (j.value("event_id", "") == id) return j;
  }
  return nullptr;
}

TEST_F(OutboxAgentJsonLogsTest, StateChangesCarryEventIdAndDestination) {
  const AgentRun& run = Run();
  const nlohmann::json retry = Find(run, "retry_scheduled", run.flaky_id);
  ASSERT_TRUE(retry.is_object()) << run.err;
  EXPECT_EQ(retry.value("destination", ""), "flaky");
  const nlohmann::json dead = Find(run, "dead_letter", run.flaky_id);
  ASSERT_TRUE(dead.is_object()) << run.err;
  EXPECT_EQ(dead.value("destination", ""), "flaky");
  EXPECT_EQ(dead.value("level", ""), "error");
  EXPECT_TRUE(Find(run, "no_route", run.orphan_id).is_object()) << run.err;
  EXPECT_FALSE(Find(run, "dead_letter", run.orphan_id).is_object()) << run.err;
  const nlohmann::json paused = Find(run, "destination_paused", run.gone_id);
  ASSERT_TRUE(paused.is_object()) << run.err;
  EXPECT_EQ(paused.value("destination", ""), "gone");
}

TEST_F(OutboxAgentJsonLogsTest, UnreachableAndBackNameTheDestination) {
  const AgentRun& run = Run();
  const std::set<std::string> held(run.held_ids.begin(), run.held_ids.end());
  for (const char* event :
       {"destination_unreachable", "destination_reachable"}) {
    const std::vector<nlohmann::json> records = Records(run, event);
    ASSERT_EQ(records.size(), 1u) << event << " in:\n" << run.err;
    EXPECT_EQ(records[0].value("destination", ""), "down");
    EXPECT_TRUE(held.count(records[0].value("event_id", "")))
        << records[0].dump();
  }
}

TEST(OutboxAgentFlagsTest, UnknownLogFormatIsAUsageError) {
  testing::TempDir dir;
  absl::StatusOr<sink::ExitResult> run =
      sink::RunToExit(OUTBOX_AGENT_BINARY, dir.path(),
                      {"--db", dir.Sub("db"), "--config",
                       dir.Sub("agent.textproto"), "--log-format", "xml"});
  ASSERT_OUTBOX_OK(run);
  EXPECT_EQ(run->exit_code, 2);
  EXPECT_TRUE(absl::StrContains(
      run->err, "--log-format must be text or json, not \"xml\""))
      << run->err;
}

TEST(OutboxAgentFlagsTest, HelpDescribesLogFormat) {
  testing::TempDir dir;
  absl::StatusOr<sink::ExitResult> run =
      sink::RunToExit(OUTBOX_AGENT_BINARY, dir.path(), {"--help"});
  ASSERT_OUTBOX_OK(run);
  EXPECT_EQ(run->exit_code, 0);
  EXPECT_TRUE(absl::StrContains(run->out, "[--log-format text|json]"))
      << run->out;
}

}  // namespace
}  // namespace outbox
