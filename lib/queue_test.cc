// Copyright (c) edge-outbox authors.
//
// The queue as the agent sees it: due order, FIFO per ordering key,
// deliver_after, attempts, delivery, dead letters and replay, across reopen.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/crash_points.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using testing::MakeEvent;

using QueueTest = testing::StoreTest;

TEST_F(QueueTest, DueEventsComeInCommitOrder) {
  std::string a = CommitEvent(MakeEvent("t"));
  std::string b = CommitEvent(MakeEvent("t"));
  std::string c = CommitEvent(MakeEvent("t"));
  EXPECT_THAT(DueIds(), ElementsAre(a, b, c));
  EXPECT_THAT(DueIds(2), ElementsAre(a, b));
}

TEST_F(QueueTest, OnlyFirstEventOfAnOrderingKeyIsDue) {
  std::string a1 = CommitEvent(MakeEvent("t", "terminal-a"));
  std::string b1 = CommitEvent(MakeEvent("t", "terminal-b"));
  CommitEvent(MakeEvent("t", "terminal-a"));
  std::string free = CommitEvent(MakeEvent("t"));
  EXPECT_THAT(DueIds(), ElementsAre(a1, b1, free));
}

std::vector<std::string> Ids(const std::vector<PendingEvent>& events) {
  std::vector<std::string> ids;
  for (const PendingEvent& e : events) ids.push_back(e.id);
  return ids;
}

TEST_F(QueueTest, KeyFollowersAreTheEventsQueuedBehindTheHeadInOrder) {
  const std::string a1 = CommitEvent(MakeEvent("t", "a"));
  CommitEvent(MakeEvent("t", "b"));
  const std::string a2 = CommitEvent(MakeEvent("u", "a"));
  CommitEvent(MakeEvent("t"));
  const std::string a3 = CommitEvent(MakeEvent("t", "a"));
  const PendingEvent head = DueWithId(a1);
  auto all = store_->KeyFollowers(head, 10);
  ASSERT_OUTBOX_OK(all);
  EXPECT_THAT(Ids(*all), ElementsAre(a2, a3));
  auto one = store_->KeyFollowers(head, 1);
  ASSERT_OUTBOX_OK(one);
  EXPECT_THAT(Ids(*one), ElementsAre(a2));
  EXPECT_EQ((*one)[0].type, "u");  // read whole, as NextDue reads
}

TEST_F(QueueTest, KeyFollowersOfAnythingButAKeysHeadAreNone) {
  const std::string a1 = CommitEvent(MakeEvent("t", "a"));
  const std::string a2 = CommitEvent(MakeEvent("t", "a"));
  const std::string free = CommitEvent(MakeEvent("t"));
  const PendingEvent head = DueWithId(a1);
  auto of_free = store_->KeyFollowers(DueWithId(free), 10);
  ASSERT_OUTBOX_OK(of_free);
  EXPECT_TRUE(of_free->empty());
  ASSERT_OUTBOX_OK(store_->MarkDelivered(head));
  auto of_gone = store_->KeyFollowers(head, 10);  // a2 heads the key now
  ASSERT_OUTBOX_OK(of_gone);
  EXPECT_TRUE(of_gone->empty());
  auto of_new = store_->KeyFollowers(DueWithId(a2), 10);
  ASSERT_OUTBOX_OK(of_new);
  EXPECT_TRUE(of_new->empty());
}

TEST_F(QueueTest, KeyFollowersSurviveReopen) {
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(CommitEvent(MakeEvent("t", "k")));
  Reopen();
  auto followers = store_->KeyFollowers(DueWithId(ids[0]), 10);
  ASSERT_OUTBOX_OK(followers);
  EXPECT_THAT(Ids(*followers), ElementsAre(ids[1], ids[2], ids[3]));
}

TEST_F(QueueTest, OrderingPerKeyHoldsAcrossReopen) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(CommitEvent(MakeEvent("t", "k")));
  for (size_t i = 0; i < ids.size(); ++i) {
    Reopen();
    PendingEvent head = OnlyDue();
    EXPECT_EQ(head.id, ids[i]) << "position " << i;
    ASSERT_OUTBOX_OK(store_->MarkDelivered(head));
  }
  EXPECT_TRUE(DueIds().empty());
}

TEST_F(QueueTest, DeliverAfterIsHonoured) {
  Event later = MakeEvent("reminder");
  later.deliver_after = clock_.Now() + absl::Minutes(10);
  std::string id = CommitEvent(later);
  auto due = store_->NextDue(10);
  ASSERT_OUTBOX_OK(due);
  EXPECT_TRUE(due->events.empty());
  EXPECT_EQ(due->next_due, later.deliver_after);

  Reopen();
  clock_.Advance(absl::Minutes(9));
  EXPECT_TRUE(DueIds().empty());
  clock_.Advance(absl::Minutes(1));
  EXPECT_THAT(DueIds(), ElementsAre(id));
}

TEST_F(QueueTest, WaitingEventStillBlocksItsOrderingKey) {
  Event first = MakeEvent("t", "k");
  first.deliver_after = clock_.Now() + absl::Minutes(1);
  CommitEvent(first);
  CommitEvent(MakeEvent("t", "k"));
  EXPECT_TRUE(DueIds().empty());
}

TEST_F(QueueTest, RecordAttemptDelaysAndCountsAcrossReopen) {
  CommitEvent(MakeEvent("t"));
  PendingEvent e = OnlyDue();
  AttemptRecord attempt;
  attempt.error = "HTTP 503";
  attempt.http_status = 503;
  attempt.next_attempt = clock_.Now() + absl::Seconds(30);
  ASSERT_OUTBOX_OK(store_->RecordAttempt(e, attempt));

  Reopen();
  EXPECT_TRUE(DueIds().empty());
  clock_.Advance(absl::Seconds(30));
  PendingEvent again = OnlyDue();
  EXPECT_EQ(again.id, e.id);
  EXPECT_EQ(again.attempts, 1u);
  EXPECT_EQ(again.last_error, "HTTP 503");
  EXPECT_EQ(again.last_http_status, 503);
  EXPECT_EQ(again.first_attempt, e.created);
}

TEST_F(QueueTest, SkippedEventStillBlocksItsKey) {
  CommitEvent(MakeEvent("t", "a"));  // seq 0, skipped (as if in flight)
  CommitEvent(MakeEvent("t", "a"));
  std::string b = CommitEvent(MakeEvent("t", "b"));
  auto due = store_->NextDue(
      10, [](const Lane&) { return LaneGate::kOpen; },
      [](uint64_t seq) { return seq == 0; });
  ASSERT_OUTBOX_OK(due);
  ASSERT_EQ(due->events.size(), 1u);
  EXPECT_EQ(due->events[0].id, b);
}

TEST_F(QueueTest, MarkDeliveredRemovesOnceAndCounts) {
  CommitEvent(MakeEvent("t"));
  PendingEvent e = OnlyDue();
  ASSERT_OUTBOX_OK(store_->MarkDelivered(e));
  EXPECT_STATUS_CODE(store_->MarkDelivered(e), absl::StatusCode::kNotFound);
  Reopen();
  EXPECT_TRUE(DueIds().empty());
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 0u);
  EXPECT_EQ(stats->pending_bytes, 0u);
  EXPECT_EQ(stats->delivered_total, 1u);
}

TEST_F(QueueTest, OutOfOrderDeliveryKeepsTheRest) {
  std::string a = CommitEvent(MakeEvent("t"));
  std::string b = CommitEvent(MakeEvent("t"));
  std::string c = CommitEvent(MakeEvent("t"));
  auto due = store_->NextDue(10);
  ASSERT_OUTBOX_OK(due);
  ASSERT_OUTBOX_OK(store_->MarkDelivered(due->events[1]));  // b first
  Reopen();
  EXPECT_THAT(DueIds(), ElementsAre(a, c));
  ASSERT_OUTBOX_OK(store_->MarkDelivered(DueWithId(a)));
  Reopen();
  EXPECT_THAT(DueIds(), ElementsAre(c));
}

TEST_F(QueueTest, DeadLetterUnblocksKeyAndKeepsReason) {
  std::string poison = CommitEvent(MakeEvent("t", "k"));
  std::string next = CommitEvent(MakeEvent("t", "k"));
  PendingEvent e = OnlyDue();
  ASSERT_EQ(e.id, poison);
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(e, "HTTP 400 Bad Request"));
  Reopen();
  EXPECT_THAT(DueIds(), ElementsAre(next));
  auto dead = store_->FindDeadLetter(poison);
  ASSERT_OUTBOX_OK(dead);
  EXPECT_EQ(dead->reason, "HTTP 400 Bad Request");
  EXPECT_EQ(dead->event.id, poison);
  EXPECT_FALSE(dead->undecodable);
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->dead_letters, 1u);
  EXPECT_EQ(stats->pending_events, 1u);
}

TEST_F(QueueTest, ReplayPutsDeadLetterBackWithSameIdAtTheEnd) {
  std::string a = CommitEvent(MakeEvent("t"));
  std::string b = CommitEvent(MakeEvent("t"));
  PendingEvent first = store_->NextDue(1)->events.at(0);
  ASSERT_OUTBOX_OK(store_->RecordAttempt(
      first, AttemptRecord{"HTTP 500", 500, clock_.Now()}));
  first = store_->NextDue(1)->events.at(0);
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(first, "gave up"));
  ASSERT_OUTBOX_OK(store_->Replay(a));
  Reopen();
  auto due = store_->NextDue(10);
  ASSERT_OUTBOX_OK(due);
  ASSERT_EQ(due->events.size(), 2u);
  EXPECT_EQ(due->events[0].id, b);
  EXPECT_EQ(due->events[1].id, a);
  EXPECT_EQ(due->events[1].attempts, 0u);
  EXPECT_STATUS_CODE(store_->FindDeadLetter(a), absl::StatusCode::kNotFound);
  EXPECT_STATUS_CODE(store_->Replay(a), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetStats()->dead_letters, 0u);
}

TEST_F(QueueTest, PurgeDeadLettersRemovesOnlyOlderOnes) {
  CommitEvent(MakeEvent("t"));
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(OnlyDue(), "old"));
  clock_.Advance(absl::Hours(48));
  std::string fresh = CommitEvent(MakeEvent("t"));
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(OnlyDue(), "new"));
  auto purged = store_->PurgeDeadLetters(absl::Hours(24));
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 1u);
  Reopen();
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_EQ((*dead)[0].event.id, fresh);
  EXPECT_EQ(store_->GetStats()->dead_letters, 1u);
}

// A day of dead letters is never purged as one write: bounded batches, each
// counted with what it deletes, so a power cut between two leaves the first
// deleted and counted (and a large purge never builds one huge batch).
TEST_F(QueueTest, PurgeDeadLettersWritesBoundedBatches) {
  options_.sync = false;  // a fixture of 1,200 dead letters
  Reopen();
  constexpr int kDead = 1200;
  Txn txn;
  for (int i = 0; i < kDead; ++i) txn.Emit(MakeEvent("t"));
  ASSERT_OUTBOX_OK(store_->Commit(txn));
  auto due = store_->NextDue(kDead);
  ASSERT_OUTBOX_OK(due);
  std::vector<Settlement> dead;
  for (PendingEvent& e : due->events) {
    Settlement s;
    s.kind = Settlement::Kind::kDeadLetterUnsent;
    s.event = std::move(e);
    s.reason = "rejected";
    dead.push_back(std::move(s));
  }
  ASSERT_OUTBOX_OK(store_->Settle(dead));
  clock_.Advance(absl::Hours(2));
  int writes = 0;
  internal::TEST_SetCrashHook([&](absl::string_view point) {
    if (point == internal::kPurgeBeforeWrite) ++writes;
  });
  auto purged = store_->PurgeDeadLetters(absl::Hours(1));
  internal::TEST_SetCrashHook(nullptr);
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, static_cast<size_t>(kDead));
  EXPECT_EQ(writes, 3) << "1,200 deletions in batches of at most 512";
  Reopen();
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->dead_letters, 0u);
  EXPECT_EQ(stats->dead_letters_purged, static_cast<uint64_t>(kDead));
}

TEST_F(QueueTest, PurgeDeadLetterDeletesThatOneOnly) {
  const std::string a = CommitEvent(MakeEvent("t", "k1"));
  const std::string b = CommitEvent(MakeEvent("t", "k2"));
  auto due = store_->NextDue(10);
  ASSERT_OUTBOX_OK(due);
  ASSERT_EQ(due->events.size(), 2u);
  for (const PendingEvent& e : due->events) {
    ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(e, "rejected"));
  }
  ASSERT_OUTBOX_OK(store_->PurgeDeadLetter(a));
  Reopen();
  EXPECT_STATUS_CODE(store_->FindDeadLetter(a), absl::StatusCode::kNotFound);
  EXPECT_OUTBOX_OK(store_->FindDeadLetter(b));
  EXPECT_EQ(store_->GetStats()->dead_letters, 1u);
  EXPECT_STATUS_CODE(store_->PurgeDeadLetter(a), absl::StatusCode::kNotFound);
}

// Deleting a dead letter is never silent: every purge is counted, and the
// count is stored with the queue, so a restart does not reset it.
TEST_F(QueueTest, PurgedDeadLettersAreCountedAcrossReopen) {
  for (int i = 0; i < 3; ++i) {
    CommitEvent(MakeEvent("t"));
    ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(OnlyDue(), "rejected"));
  }
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 3u);
  ASSERT_OUTBOX_OK(store_->PurgeDeadLetter(dead->back().event.id));
  clock_.Advance(absl::Hours(1));
  auto purged = store_->PurgeDeadLetters(absl::ZeroDuration());
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 2u);
  EXPECT_EQ(store_->GetStats()->dead_letters_purged, 3u);
  Reopen();
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->dead_letters_purged, 3u);
  EXPECT_EQ(stats->dead_letters, 0u);
}

TEST_F(QueueTest, StatsReportOldestPendingAge) {
  CommitEvent(MakeEvent("t"));
  clock_.Advance(absl::Minutes(5));
  CommitEvent(MakeEvent("t"));
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 2u);
  EXPECT_GT(stats->pending_bytes, 0u);
  EXPECT_EQ(stats->oldest_pending_age, absl::Minutes(5));
}

TEST_F(QueueTest, FindPendingByIdScansQueue) {
  CommitEvent(MakeEvent("t"));
  std::string b = CommitEvent(MakeEvent("u"));
  auto found = store_->FindPending(b);
  ASSERT_OUTBOX_OK(found);
  EXPECT_EQ(found->type, "u");
  EXPECT_STATUS_CODE(store_->FindPending("nope"), absl::StatusCode::kNotFound);
}

// Found by the power-cut soak's clock jumps: a replay schedules the event
// now, so after the wall clock went back it is due at once, not after the
// time between its commit and its replay.
TEST_F(QueueTest, ReplayedEventIsDueAfterTheClockWentBackAndAReopen) {
  const std::string id = CommitEvent(MakeEvent("t"));
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(OnlyDue(), "test"));
  clock_.Advance(absl::Hours(3));
  ASSERT_OUTBOX_OK(store_->Replay(id));
  clock_.Set(clock_.Now() - absl::Hours(24 * 365 * 6));
  Reopen();
  EXPECT_EQ(DueIds(), std::vector<std::string>{id});
}

}  // namespace
}  // namespace outbox
