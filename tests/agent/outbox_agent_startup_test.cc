// Copyright (c) edge-outbox authors.
//
// The real outbox-agent signalled while it starts: opening a store with a
// day's backlog takes a while, and a `systemctl reload` (SIGHUP) or a stop
// (SIGTERM) issued at boot lands in that window. A signal the agent has no
// handler for yet kills it with the default action (exit 129 for SIGHUP).
//
// Invariant: a SIGHUP at any moment of startup is a reload, never a death;
// a SIGTERM is a clean stop (exit 0, the store closed and whole).
// The signal is sent while the process holds the store's LOCK file and
// has not started delivering: in the middle of Store::Open.

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

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

// Enough that opening the store (rebuilding its index) takes tens of
// milliseconds natively, so the signal lands inside Store::Open.
constexpr int kEvents = 50000;
constexpr int kPerTxn = 500;
constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

class OutboxAgentStartupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Options options;
    options.tables = {"sales"};
    options.sync = false;  // a fixture: Close() syncs
    auto store = Store::Open(options, dir_.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    for (int t = 0; t < kEvents / kPerTxn; ++t) {
      Txn txn;
      for (int i = 0; i < kPerTxn; ++i) {
        Event e;
        e.type = "sale";
        e.payload = absl::StrCat(R"({"n":)", t * kPerTxn + i, "}");
        txn.Emit(e);
      }
      ASSERT_OUTBOX_OK((*store)->Commit(txn));
    }
    ASSERT_OUTBOX_OK((*store)->Close());
    // Port 1: nothing listens, the events wait (unreachable, not attempts).
    std::ofstream(dir_.Sub("agent.textproto"))
        << R"(destinations { name: "down" url: "http://127.0.0.1:1/" }
        routes { event_type: "*" destination: "down" })";
  }

  std::unique_ptr<ChildProcess> StartAgent() {
    auto agent = ChildProcess::StartToFiles(
        testing::TargetCommand(
            OUTBOX_AGENT_BINARY,
            {"--db", dir_.Sub("db"), "--config", dir_.Sub("agent.textproto"),
             "--log-format", "json"}),
        dir_.Sub("agent.out"), dir_.Sub("agent.err"));
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? std::move(*agent) : nullptr;
  }

  // True once process `pid` has the store's LOCK file open (RocksDB takes
  // it first thing in DB::Open).
  bool HoldsTheLock(pid_t pid) {
    const std::string fds = absl::StrCat("/proc/", pid, "/fd");
    const std::string lock = dir_.Sub("db") + "/LOCK";
    DIR* d = opendir(fds.c_str());
    if (d == nullptr) return false;
    bool found = false;
    while (dirent* e = readdir(d)) {
      char target[4096];
      const std::string link = absl::StrCat(fds, "/", e->d_name);
      const ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
      if (n > 0 && std::string(target, n) == lock) found = true;
    }
    closedir(d);
    return found;
  }

  // Sends `signal` as soon as the agent holds the store's lock; returns
  // false if it never did (it died first, or a deadline passed). `started`
  // says whether the agent had already logged agent_started: then the
  // signal missed the window and proves nothing.
  bool SignalWhileOpening(ChildProcess* agent, int signal, bool* started) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (!HoldsTheLock(agent->pid())) {
      if (agent->Wait(absl::Now()) != -1 || absl::Now() > deadline) {
        return false;
      }
      usleep(200);
    }
    // Read before the signal: started means it came too late to test the
    // window (the log line comes after the store opened).
    *started = Count(ReadFile(dir_.Sub("agent.err")), "agent_started") > 0;
    return agent->Signal(signal).ok();
  }

  testing::TempDir dir_;
};

TEST_F(OutboxAgentStartupTest, ASighupWhileTheStoreOpensIsAReload) {
  auto agent = StartAgent();
  ASSERT_NE(agent, nullptr);
  bool started = false;
  ASSERT_TRUE(SignalWhileOpening(agent.get(), SIGHUP, &started))
      << ReadFile(dir_.Sub("agent.err"));
  ASSERT_FALSE(started) << "the signal came after startup; nothing tested";
  // Once running, the agent reads its configuration again: the SIGHUP was
  // taken as the reload it asks for, not lost.
  EXPECT_TRUE(WaitUntil([&] {
    return agent->Wait(absl::Now()) != -1 ||  // it exited
           Count(ReadFile(dir_.Sub("agent.err")), "config_reloaded") == 1;
  })) << ReadFile(dir_.Sub("agent.err"));
  ASSERT_FALSE(agent->reaped()) << "exit " << agent->exit_code() << "\n"
                                << ReadFile(dir_.Sub("agent.err"));
  ASSERT_OUTBOX_OK(agent->Signal(SIGTERM));
  EXPECT_EQ(agent->Wait(absl::Now() + absl::Seconds(30)), 0)
      << ReadFile(dir_.Sub("agent.err"));
  auto store = Store::OpenReadOnly(Options(), dir_.Sub("db"));
  ASSERT_OUTBOX_OK(store);
  auto stats = (*store)->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, static_cast<uint64_t>(kEvents));
  EXPECT_EQ(stats->dead_letters, 0u);
}

TEST_F(OutboxAgentStartupTest, ASigtermWhileTheStoreOpensStopsCleanly) {
  auto agent = StartAgent();
  ASSERT_NE(agent, nullptr);
  bool started = false;
  ASSERT_TRUE(SignalWhileOpening(agent.get(), SIGTERM, &started))
      << ReadFile(dir_.Sub("agent.err"));
  ASSERT_FALSE(started) << "the signal came after startup; nothing tested";
  EXPECT_EQ(agent->Wait(absl::Now() + absl::Seconds(30)), 0)
      << ReadFile(dir_.Sub("agent.err"));
  const std::string log = ReadFile(dir_.Sub("agent.err"));
  EXPECT_EQ(Count(log, "agent_started"), 0u) << log;
  EXPECT_EQ(Count(log, R"("event":"agent_exit")"), 1u) << log;
  auto store = Store::OpenReadOnly(Options(), dir_.Sub("db"));
  ASSERT_OUTBOX_OK(store);
  auto stats = (*store)->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, static_cast<uint64_t>(kEvents));
}

// rate_limit { events_per_second: 0.5 }, the proto's own example: one event
// every two seconds. The events bucket once held one second's worth, half an
// event, and a request needs a whole one: nothing was ever sent.
TEST(OutboxAgentRateLimitTest, HalfAnEventASecondDeliversEveryEvent) {
  testing::TempDir dir;
  WritePrivate(dir.Sub("secret"), kSecret);
  auto sink = sink::SinkProcess::Start(
      testing::TargetCommand(
          OUTBOX_SINK_BINARY,
          {"--secret-file", dir.Sub("secret"), "--log", dir.Sub("sink.log")}),
      dir.path());
  ASSERT_OUTBOX_OK(sink);
  {
    Options options;
    options.tables = {"sales"};
    auto store = Store::Open(options, dir.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    for (int i = 0; i < 3; ++i) {
      Txn txn;
      Event e;
      e.type = "sale";
      e.payload = absl::StrCat(R"({"n":)", i, "}");
      txn.Emit(e);
      ASSERT_OUTBOX_OK((*store)->Commit(txn));
    }
    ASSERT_OUTBOX_OK((*store)->Close());
  }
  std::ofstream(dir.Sub("agent.textproto")) << absl::StrCat(
      R"(destinations { name: "sink" url: "http://127.0.0.1:)", (*sink)->port(),
      R"(/" secrets_file: ")", dir.Sub("secret"), R"("
        rate_limit { events_per_second: 0.5 } }
      routes { event_type: "*" destination: "sink" })");
  auto agent = ChildProcess::StartToFiles(
      testing::TargetCommand(
          OUTBOX_AGENT_BINARY,
          {"--db", dir.Sub("db"), "--config", dir.Sub("agent.textproto"),
           "--drain-and-exit", "--log-format", "json"}),
      dir.Sub("agent.out"), dir.Sub("agent.err"));
  ASSERT_OUTBOX_OK(agent);
  // About 4 s (at 0, 2 and 4 s); the deadline only guards a hang.
  EXPECT_EQ((*agent)->Wait(absl::Now() + absl::Seconds(120)), 0)
      << ReadFile(dir.Sub("agent.err"));
  const std::string log = ReadFile(dir.Sub("sink.log"));
  EXPECT_EQ(Count(log, R"("status":200)"), 3u) << log;
}

}  // namespace
}  // namespace outbox
