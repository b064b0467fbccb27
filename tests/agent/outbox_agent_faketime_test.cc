// Copyright (c) edge-outbox authors.
//
// The real outbox-agent run six years in the past by `faketime` (libfaketime
// shifts every wall-clock read of the process, as a board without an RTC
// that booted with a stale time sees it), against the real outbox-sink,
// which answers 401 to a webhook-timestamp more than 5 minutes from its own
// clock, as Standard Webhooks receivers do.
//
// Invariant: the stale run sends nothing and dead-letters nothing (it logs
// clock_untrusted); a run with the right clock then delivers every event
// once, signed and in time. The contrast, the same stale run with the check
// turned off, shows the receiver does refuse such timestamps.

#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "platform/child_process.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/text_files.h"

namespace outbox {
namespace {

using testing::Count;
using testing::ReadFile;
using testing::WaitUntil;
using testing::WritePrivate;

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

class FaketimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WritePrivate(dir_.Sub("secret"), kSecret);
    auto sink = sink::SinkProcess::Start(
        {OUTBOX_SINK_BINARY, "--secret-file", dir_.Sub("secret"), "--log",
         dir_.Sub("sink.log")},
        dir_.path());
    ASSERT_OUTBOX_OK(sink);
    sink_ = std::move(*sink);
    Options options;
    options.tables = {"sales"};
    auto store = Store::Open(options, dir_.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    for (int i = 0; i < 5; ++i) {
      Txn txn;
      Event e;
      e.type = "sale";
      e.payload = absl::StrCat(R"({"n":)", i, "}");
      ids_.push_back(txn.Emit(e));
      txn.Put("sales", absl::StrCat("sale-", i), e.payload);
      ASSERT_OUTBOX_OK((*store)->Commit(txn));
    }
    ASSERT_OUTBOX_OK((*store)->Close());
  }

  void WriteConfig(const std::string& agent_settings) {
    std::ofstream(dir_.Sub("agent.textproto")) << absl::StrCat(
        R"(destinations { name: "sink" url: "http://127.0.0.1:)", sink_->port(),
        R"(/" secrets_file: ")", dir_.Sub("secret"), R"(" }
        routes { event_type: "*" destination: "sink" }
        agent { probe_interval_min: "50ms" probe_interval_max: "200ms" )",
        agent_settings, " }\n");
  }

  // Runs outbox-agent --drain-and-exit with its wall clock moved by
  // `offset` (faketime's "-6y", "+40d"; "" leaves it right); returns its
  // exit code. Its stderr goes to `name`.err.
  int Drain(const std::string& offset, const std::string& name) {
    std::vector<std::string> command;
    if (!offset.empty()) {
      // The monotonic clock stays real, as on the board: only the wall
      // clock is wrong there.
      command = {"/usr/bin/env", "FAKETIME_DONT_FAKE_MONOTONIC=1",
                 OUTBOX_FAKETIME_BINARY, "-f", offset};
    }
    for (const char* arg : {OUTBOX_AGENT_BINARY, "--db", "", "--config", "",
                            "--drain-and-exit", "--log-format", "json"}) {
      command.push_back(arg);
    }
    command[command.size() - 6] = dir_.Sub("db");
    command[command.size() - 4] = dir_.Sub("agent.textproto");
    auto agent = ChildProcess::StartToFiles(command, dir_.Sub(name + ".out"),
                                            dir_.Sub(name + ".err"));
    EXPECT_TRUE(agent.ok()) << agent.status();
    if (!agent.ok()) return -1;
    return (*agent)->Wait(absl::Now() + absl::Seconds(60));
  }

  Stats StoreStats() {
    auto store = Store::OpenReadOnly(Options(), dir_.Sub("db"));
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return Stats();
    auto stats = (*store)->GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : Stats();
  }

  testing::TempDir dir_;
  std::unique_ptr<sink::SinkProcess> sink_;
  std::vector<std::string> ids_;
};

TEST_F(FaketimeTest, SixYearsBackSendsNothingThenTheRightClockDeliversAll) {
  WriteConfig("");
  EXPECT_EQ(Drain("-6y", "stale"), 3);  // events wait
  const std::string stale = ReadFile(dir_.Sub("stale.err"));
  EXPECT_EQ(Count(stale, R"("event":"clock_untrusted")"), 1u) << stale;
  EXPECT_EQ(ReadFile(dir_.Sub("sink.log")), "") << "nothing may leave";
  Stats stats = StoreStats();
  EXPECT_EQ(stats.pending_events, ids_.size());
  EXPECT_EQ(stats.dead_letters, 0u);

  EXPECT_EQ(Drain("", "right"), 0);
  const std::string log = ReadFile(dir_.Sub("sink.log"));
  EXPECT_EQ(Count(log, "\"status\":200"), ids_.size()) << log;
  EXPECT_EQ(Count(log, "\"signature_valid\":true"), ids_.size()) << log;
  for (const std::string& id : ids_) {
    EXPECT_EQ(Count(log, absl::StrCat(R"("id":")", id, R"(")")), 1u) << id;
  }
  stats = StoreStats();
  EXPECT_EQ(stats.pending_events, 0u);
  EXPECT_EQ(stats.dead_letters, 0u);
}

TEST_F(FaketimeTest, WithTheCheckOffTheReceiverRefusesAndNothingIsBuried) {
  WriteConfig(R"(clock_tolerance: "0")");
  EXPECT_EQ(Drain("-6y", "stale"), 3);
  const std::string log = ReadFile(dir_.Sub("sink.log"));
  EXPECT_GE(Count(log, "webhook-timestamp outside tolerance"), 1u) << log;
  EXPECT_EQ(Count(log, "\"status\":200"), 0u) << log;
  EXPECT_EQ(Count(ReadFile(dir_.Sub("stale.err")),
                  R"("event":"destination_refused")"),
            1u);
  const Stats stats = StoreStats();
  EXPECT_EQ(stats.pending_events, ids_.size());
  EXPECT_EQ(stats.dead_letters, 0u);
}

// A clock 40 days ahead (a fast RTC, an NTP glitch, a year typed wrong)
// once made the first housekeeping round purge every dead letter and
// idempotency key, minutes old, as older than their retention. Deletion by
// age now uses the store's own clock, which a wall clock cannot move.
TEST_F(FaketimeTest, FortyDaysAheadPurgesNoDeadLetterAndForgetsNoKey) {
  auto keyed = [] {
    Txn txn;
    txn.Put("sales", "sale-keyed", "{}");
    txn.SetIdempotencyKey("till-7/sale-1", "201");
    return txn;
  };
  {
    Options options;
    options.tables = {"sales"};
    auto store = Store::Open(options, dir_.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    auto due = (*store)->NextDue(100);
    ASSERT_OUTBOX_OK(due);
    ASSERT_EQ(due->events.size(), ids_.size());
    for (const PendingEvent& e : due->events) {
      ASSERT_OUTBOX_OK((*store)->MoveToDeadLetters(e, "rejected: 400"));
    }
    ASSERT_OUTBOX_OK((*store)->Commit(keyed()));
    ASSERT_OUTBOX_OK((*store)->Close());
  }
  WriteConfig("");
  EXPECT_EQ(Drain("+40d", "ahead"), 0);
  const std::string log = ReadFile(dir_.Sub("ahead.err"));
  EXPECT_EQ(Count(log, "dead_letters_purged"), 0u) << log;
  const Stats stats = StoreStats();
  EXPECT_EQ(stats.dead_letters, ids_.size());
  EXPECT_EQ(stats.dead_letters_purged, 0u);
  // The till's application retries its commit, with the clock still ahead.
  testing::FakeClock ahead(absl::Now() + absl::Hours(24 * 40));
  Options options;
  options.tables = {"sales"};
  options.clock = &ahead;
  auto store = Store::Open(options, dir_.Sub("db"));
  ASSERT_OUTBOX_OK(store);
  auto again = (*store)->Commit(keyed());
  ASSERT_OUTBOX_OK(again);
  EXPECT_TRUE(again->duplicate) << "the sale would be stored twice";
  ASSERT_OUTBOX_OK((*store)->Close());
}

}  // namespace
}  // namespace outbox
