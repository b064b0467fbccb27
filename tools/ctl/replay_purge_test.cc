// Copyright (c) edge-outbox authors.
//
// outboxctl replay and purge-dead change the store as the Store API then
// sees it.

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/ctl_fixture.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using CtlReplayPurgeTest = CtlTest;

TEST_F(CtlReplayPurgeTest, ReplayPutsADeadLetterBackWithAttemptsReset) {
  const std::string id = MakeDeadLetter(absl::Now() - absl::Hours(1));
  sink::ExitResult r = Ctl({"replay", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "replayed " + id + "\n");
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_STATUS_CODE(store->FindDeadLetter(id), absl::StatusCode::kNotFound);
  absl::StatusOr<PendingEvent> event = store->FindPending(id);
  ASSERT_OUTBOX_OK(event);
  EXPECT_EQ(event->attempts, 0u);
}

TEST_F(CtlReplayPurgeTest, ReplayOfAnUnknownIdIsNotFound) {
  sink::ExitResult r = Ctl({"replay", "no-such-id"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: NOT_FOUND: "));
}

TEST_F(CtlReplayPurgeTest, ReplayAllReplaysEveryDeadLetter) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(MakeDeadLetter(absl::Now() - absl::Hours(1)));
  }
  sink::ExitResult r = Ctl({"replay", "--all"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& id : ids) {
    EXPECT_THAT(r.out, HasSubstr("replayed " + id + "\n"));
  }
  EXPECT_THAT(r.out, HasSubstr("\nreplayed 3\n"));
  Stats stats = StoreStats();
  EXPECT_EQ(stats.dead_letters, 0u);
  EXPECT_EQ(stats.pending_events, 3u);
}

TEST_F(CtlReplayPurgeTest, ReplayAllWithNothingDeadSaysSo) {
  sink::ExitResult r = Ctl({"replay", "--all"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "no dead letters to replay\n");
}

TEST_F(CtlReplayPurgeTest, PurgeDeletesOnlyDeadLettersOlderThanTheCutoff) {
  const std::string old_id = MakeDeadLetter(absl::Now());
  AgeStore(absl::Hours(99));
  const std::string recent_id = MakeDeadLetter(absl::Now());
  AgeStore(absl::Hours(1));
  sink::ExitResult r = Ctl({"purge-dead", "--older-than", "72h"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "purged 1 dead letter older than 72h\n");
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_STATUS_CODE(store->FindDeadLetter(old_id),
                     absl::StatusCode::kNotFound);
  EXPECT_OUTBOX_OK(store->FindDeadLetter(recent_id));
}

TEST_F(CtlReplayPurgeTest, PurgeOfAnIdDeletesThatDeadLetterOnly) {
  const std::string purged_id = MakeDeadLetter(absl::Now() - absl::Hours(1));
  const std::string kept_id = MakeDeadLetter(absl::Now() - absl::Hours(1));
  sink::ExitResult r = Ctl({"purge-dead", purged_id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "purged dead letter " + purged_id + "\n");
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_STATUS_CODE(store->FindDeadLetter(purged_id),
                     absl::StatusCode::kNotFound);
  EXPECT_OUTBOX_OK(store->FindDeadLetter(kept_id));
  store.reset();
  r = Ctl({"purge-dead", purged_id});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("outboxctl: NOT_FOUND: "));
}

TEST_F(CtlReplayPurgeTest, StatsCountEveryPurgedDeadLetter) {
  const std::string id = MakeDeadLetter(absl::Now());
  MakeDeadLetter(absl::Now());
  AgeStore(absl::Hours(100));
  ASSERT_EQ(Ctl({"purge-dead", id}).exit_code, 0);
  ASSERT_EQ(Ctl({"purge-dead", "--older-than", "72h"}).exit_code, 0);
  sink::ExitResult r = Ctl({"stats"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("dead letters purged: 2\n"));
  EXPECT_EQ(Field(Json(Ctl({"stats", "--json"})), "dead_letters_purged"), "2");
}

TEST_F(CtlReplayPurgeTest, PurgeRefusesAnIdTogetherWithAnAge) {
  sink::ExitResult r = Ctl({"purge-dead", "some-id", "--older-than", "72h"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("either --older-than or one dead letter id"));
}

TEST_F(CtlReplayPurgeTest, PurgeRefusesAZeroNegativeOrMissingAge) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"purge-dead", "--older-than", "0"},
           {"purge-dead", "--older-than=-5h"},
           {"purge-dead", "--older-than", "3d"},
           {"purge-dead", "--older-than", "inf"},
           {"purge-dead"}}) {
    sink::ExitResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 2) << args.back();
    EXPECT_THAT(r.err, HasSubstr("usage: outboxctl --db DIR purge-dead"));
  }
}

// A clock that once ran six years ahead left its time as the store's mark;
// reset-clock-mark brings the mark back to the machine's time, and changes
// nothing else.
TEST_F(CtlReplayPurgeTest, ResetClockMarkBringsAFutureMarkBackToNow) {
  const absl::Time future = absl::Now() + absl::Hours(6 * 365 * 24);
  testing::FakeClock ahead(future);
  {
    std::unique_ptr<Store> store = OpenStore(&ahead);
    ASSERT_NE(store, nullptr);
    Txn txn;
    Event e;
    e.type = "sale.created";
    txn.Emit(e);
    ASSERT_OUTBOX_OK(store->Commit(txn));
    EXPECT_GE(store->WallClockMark(), future - absl::Seconds(1));
    ASSERT_OUTBOX_OK(store->Close());
  }
  const absl::Time before = absl::Now();
  sink::ExitResult r = Ctl({"reset-clock-mark"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("clock mark was "));
  EXPECT_THAT(r.out, HasSubstr(", now "));
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_GE(store->WallClockMark(), before - absl::Seconds(1));
  EXPECT_LE(store->WallClockMark(), absl::Now());
  EXPECT_EQ(store->GetStats()->pending_events, 1u);
}

TEST_F(CtlReplayPurgeTest, ResetClockMarkTakesNoArguments) {
  sink::ExitResult r = Ctl({"reset-clock-mark", "now"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace outbox::ctl
