// Copyright (c) edge-outbox authors.
//
// The real outbox-agent reloading on SIGHUP, against the real outbox-sink:
// a till whose server rotated its secret first gets 401 on every request,
// holds its events (none dead-lettered), refuses a broken configuration
// sent by mistake (and goes on with the running one), then delivers every
// event once the new secret is in its file and SIGHUP reads it: no restart.

#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "platform/child_process.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/text_files.h"

namespace outbox {
namespace {

using testing::Count;
using testing::ReadFile;
using testing::WaitUntil;
using testing::WritePrivate;

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr char kOldSecret[] = "whsec_c2VjcmV0LXRoYXQtaXMtd3Jvbmc=";
constexpr int kEvents = 5;

TEST(OutboxAgentReloadTest, SighupReadsTheFixedSecretAndDeliversEverything) {
  testing::TempDir dir;
  WritePrivate(dir.Sub("sink.secret"), kSecret);
  auto sink = sink::SinkProcess::Start(
      testing::TargetCommand(OUTBOX_SINK_BINARY,
                             {"--secret-file", dir.Sub("sink.secret"), "--log",
                              dir.Sub("sink.log")}),
      dir.path());
  ASSERT_OUTBOX_OK(sink);
  {
    Options options;
    options.tables = {"sales"};
    auto store = Store::Open(options, dir.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    for (int i = 0; i < kEvents; ++i) {
      Txn txn;
      Event e;
      e.type = "sale";
      e.payload = absl::StrCat(R"({"n":)", i, "}");
      txn.Emit(e);
      txn.Put("sales", absl::StrCat("sale-", i), e.payload);
      ASSERT_OUTBOX_OK((*store)->Commit(txn));
    }
    ASSERT_OUTBOX_OK((*store)->Close());
  }
  const std::string config = absl::StrCat(
      R"(destinations { name: "sink" url: "http://127.0.0.1:)", (*sink)->port(),
      R"(/" secrets_file: ")", dir.Sub("till.secret"),
      R"(" }
      routes { event_type: "*" destination: "sink" }
      agent { probe_interval_min: "50ms" probe_interval_max: "200ms" })");
  WritePrivate(dir.Sub("till.secret"), kOldSecret);  // the server rotated
  std::ofstream(dir.Sub("agent.textproto")) << config;
  auto agent = ChildProcess::StartToFiles(
      testing::TargetCommand(
          OUTBOX_AGENT_BINARY,
          {"--db", dir.Sub("db"), "--config", dir.Sub("agent.textproto"),
           "--log-format", "json"}),
      dir.Sub("agent.out"), dir.Sub("agent.err"));
  ASSERT_OUTBOX_OK(agent);
  auto logged = [&](const std::string& event) {
    return Count(ReadFile(dir.Sub("agent.err")),
                 absl::StrCat(R"("event":")", event, R"(")"));
  };
  ASSERT_TRUE(WaitUntil([&] { return logged("destination_refused") == 1; }))
      << ReadFile(dir.Sub("agent.err"));
  // A broken configuration sent by mistake: refused, the old one goes on.
  std::ofstream(dir.Sub("agent.textproto")) << "destinations { nme: \"x\" }";
  ASSERT_OUTBOX_OK((*agent)->Signal(SIGHUP));
  ASSERT_TRUE(WaitUntil([&] { return logged("config_reload_refused") == 1; }))
      << ReadFile(dir.Sub("agent.err"));
  EXPECT_FALSE((*agent)->reaped());

  // The new secret reaches the till; SIGHUP reads it.
  std::ofstream(dir.Sub("agent.textproto")) << config;
  WritePrivate(dir.Sub("till.secret"), kSecret);
  ASSERT_OUTBOX_OK((*agent)->Signal(SIGHUP));
  ASSERT_TRUE(WaitUntil([&] { return logged("config_reloaded") == 1; }))
      << ReadFile(dir.Sub("agent.err"));
  ASSERT_TRUE(WaitUntil([&] {
    return Count(ReadFile(dir.Sub("sink.log")), R"("status":200)") >=
           static_cast<size_t>(kEvents);
  })) << ReadFile(dir.Sub("sink.log"));
  ASSERT_OUTBOX_OK((*agent)->Signal(SIGTERM));
  EXPECT_EQ((*agent)->Wait(absl::Now() + absl::Seconds(30)), 0);

  const std::string log = ReadFile(dir.Sub("sink.log"));
  EXPECT_EQ(Count(log, R"("status":200)"), static_cast<size_t>(kEvents));
  EXPECT_EQ(Count(log, R"("duplicate":true)"), 0u);
  EXPECT_GE(Count(log, R"("status":401)"), 1u);
  auto store = Store::OpenReadOnly(Options(), dir.Sub("db"));
  ASSERT_OUTBOX_OK(store);
  auto stats = (*store)->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 0u);
  EXPECT_EQ(stats->dead_letters, 0u);
}

}  // namespace
}  // namespace outbox
