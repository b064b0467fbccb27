// Copyright (c) edge-outbox authors.
//
// The queue's schedule when the wall clock jumps six years either way, as on
// a board without a real-time clock that boots with a stale time and is
// corrected by NTP later (issue 11, item 6). While the store is open, due
// times run on the monotonic clock; at open, a stored due time that lies
// further ahead than its own delay is a clock that went back, and is cut to
// that delay.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakeEvent;

constexpr absl::Duration kSixYears = absl::Hours(6 * 365 * 24);
constexpr absl::Duration kRetryIn = absl::Seconds(30);

class ClockJumpTest : public testing::StoreTest {
 protected:
  // Commits an event, fails its first attempt and schedules the retry
  // kRetryIn ahead; returns its id.
  std::string CommitAndFailOnce() {
    const std::string id = CommitEvent(MakeEvent("sale"));
    AttemptRecord attempt;
    attempt.error = "HTTP 503";
    attempt.http_status = 503;
    attempt.next_attempt = clock_.Now() + kRetryIn;
    EXPECT_OUTBOX_OK(store_->RecordAttempt(OnlyDue(), attempt));
    return id;
  }

  // How long NextDue says to wait (InfiniteDuration: nothing waits).
  absl::Duration Wait() {
    auto due = store_->NextDue(100);
    EXPECT_TRUE(due.ok()) << due.status();
    return due.ok() ? due->wait : absl::ZeroDuration();
  }

  // Delivers up to `limit` due events; returns their ids in order.
  std::vector<std::string> DeliverDue(size_t limit) {
    std::vector<std::string> ids;
    auto due = store_->NextDue(limit);
    EXPECT_TRUE(due.ok()) << due.status();
    if (!due.ok()) return ids;
    for (const PendingEvent& e : due->events) {
      EXPECT_OUTBOX_OK(store_->MarkDelivered(e));
      ids.push_back(e.id);
    }
    return ids;
  }

  void SetWallClock(absl::Duration by) { clock_.Set(clock_.Now() + by); }

  // The retry age of the one pending event.
  absl::Duration RetryAge() {
    auto pending = store_->ListPending(10);
    EXPECT_TRUE(pending.ok()) << pending.status();
    if (!pending.ok() || pending->size() != 1) {
      ADD_FAILURE() << "expected exactly one pending event";
      return absl::ZeroDuration();
    }
    return pending->front().retry_age;
  }
};

TEST_F(ClockJumpTest, RetryStaysOnItsDelayWhenTheClockIsSetBackWhileOpen) {
  const std::string id = CommitAndFailOnce();
  SetWallClock(-kSixYears);
  EXPECT_EQ(Wait(), kRetryIn);
  clock_.Advance(kRetryIn - absl::Milliseconds(1));
  EXPECT_THAT(DueIds(), IsEmpty());
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_THAT(DueIds(), ElementsAre(id));
}

TEST_F(ClockJumpTest, RetryStaysOnItsDelayWhenTheClockIsSetForwardWhileOpen) {
  const std::string id = CommitAndFailOnce();
  SetWallClock(kSixYears);
  EXPECT_THAT(DueIds(), IsEmpty()) << "a clock set forward rushed the retry";
  EXPECT_EQ(Wait(), kRetryIn);
  clock_.Advance(kRetryIn - absl::Milliseconds(1));
  EXPECT_THAT(DueIds(), IsEmpty());
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_THAT(DueIds(), ElementsAre(id));
}

// The agent decides a retry's time (Decide: wall now + delay) and the store
// records it a moment later. If NTP steps the clock back in between, the
// attempt's time (AttemptRecord::decided) keeps the retry on its delay
// instead of six years ahead (found by this test: 52560h30s).
TEST_F(ClockJumpTest, RetryDecidedJustBeforeTheClockIsSetBackStaysOnItsDelay) {
  const std::string id = CommitEvent(MakeEvent("sale"));
  AttemptRecord attempt;
  attempt.error = "HTTP 503";
  attempt.decided = clock_.Now();  // decided by the agent
  attempt.next_attempt = attempt.decided + kRetryIn;
  SetWallClock(-kSixYears);  // NTP steps the clock
  ASSERT_OUTBOX_OK(store_->RecordAttempt(OnlyDue(), attempt));
  EXPECT_LE(Wait(), kRetryIn);
  clock_.Advance(kRetryIn);
  EXPECT_THAT(DueIds(), ElementsAre(id));
}

// An attempt recorded without the agent's retry age (AttemptRecord's
// default, as a caller of its own or an older agent records it) adds the
// wall-clock gap since the previous attempt to the stored age: a clock set
// back makes that gap negative, which must count as none, never shrink the
// age (max_age would then never end the retries).
TEST_F(ClockJumpTest, TheStoredRetryAgeNeverShrinksWhenTheClockIsSetBack) {
  CommitAndFailOnce();
  clock_.Advance(absl::Minutes(10));
  AttemptRecord attempt;
  attempt.error = "HTTP 503";
  attempt.next_attempt = clock_.Now() + kRetryIn;
  ASSERT_OUTBOX_OK(store_->RecordAttempt(OnlyDue(), attempt));
  ASSERT_EQ(RetryAge(), absl::Minutes(10));
  clock_.Advance(kRetryIn);
  SetWallClock(-absl::Hours(1));
  attempt.next_attempt = clock_.Now() + kRetryIn;
  ASSERT_OUTBOX_OK(store_->RecordAttempt(OnlyDue(), attempt));
  EXPECT_EQ(RetryAge(), absl::Minutes(10));
}

// After a restart the store cannot know how long the device was off, and a
// clock that went back says nothing about it: the retry is due at once
// rather than six years ahead (or its whole delay again).
TEST_F(ClockJumpTest, RetryIsDueAtOnceAfterReopenWithTheClockSetBack) {
  const std::string id = CommitAndFailOnce();
  SetWallClock(-kSixYears);  // its stored due time is now six years ahead
  Reopen();
  EXPECT_THAT(DueIds(), ElementsAre(id));
}

TEST_F(ClockJumpTest, RetryIsDueAtOnceAfterReopenWithTheClockSetForward) {
  const std::string id = CommitAndFailOnce();
  SetWallClock(kSixYears);
  Reopen();
  EXPECT_THAT(DueIds(), ElementsAre(id));
}

TEST_F(ClockJumpTest, DeliverAfterHoldsForItsDelayAfterReopenWithClockSetBack) {
  Event later = MakeEvent("reminder");
  later.deliver_after = clock_.Now() + absl::Minutes(10);
  const std::string id = CommitEvent(later);
  SetWallClock(-kSixYears);
  Reopen();
  EXPECT_EQ(Wait(), absl::Minutes(10));
  clock_.Advance(absl::Minutes(10) - absl::Milliseconds(1));
  EXPECT_THAT(DueIds(), IsEmpty()) << "deliver_after released early";
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_THAT(DueIds(), ElementsAre(id));
}

TEST_F(ClockJumpTest, NothingIsLostOrDuplicatedAcrossJumpsAndReopens) {
  std::vector<std::string> committed;
  for (int i = 0; i < 3; ++i) committed.push_back(CommitAndFailOnce());
  committed.push_back(CommitEvent(MakeEvent("sale", "till-1")));
  committed.push_back(CommitEvent(MakeEvent("sale", "till-1")));
  Event later = MakeEvent("reminder");
  later.deliver_after = clock_.Now() + absl::Minutes(1);
  committed.push_back(CommitEvent(later));

  // Reopened with the clock six years off either way, one delivery per
  // open, and the clock put right again while the store is open.
  const absl::Time start = clock_.Now();
  std::vector<std::string> delivered;
  for (absl::Duration jump : {kSixYears, -kSixYears, kSixYears}) {
    clock_.Set(start + jump);
    Reopen();
    for (const std::string& id : DeliverDue(1)) delivered.push_back(id);
    clock_.Set(start);
    clock_.Advance(absl::Seconds(5));
  }
  // Last, a boot with a stale clock: what is left is due within the longest
  // delay of its own (the deliver_after minute).
  clock_.Set(start - kSixYears);
  Reopen();
  clock_.Advance(absl::Minutes(1));
  for (int round = 0; round < 10; ++round) {
    for (const std::string& id : DeliverDue(100)) delivered.push_back(id);
  }
  EXPECT_THAT(delivered, ::testing::UnorderedElementsAreArray(committed));
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 0u);
  EXPECT_EQ(stats->delivered_total, committed.size());
}

}  // namespace
}  // namespace outbox
