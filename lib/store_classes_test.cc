// Copyright (c) edge-outbox authors.
//
// Event classes in the store: priorities order NextDue across lanes; a
// class's own limits refuse a commit or evict its oldest events as a dead
// letter (or a count); a fiscal class is never touched; expiry gives up
// only what is old by a clock that did not jump. Every test reopens the
// store and checks what survived.

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/crash_points.h"
#include "lib/store_impl.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeEvent;
using ::testing::StartsWith;

EventClass Telemetry() {
  EventClass c;
  c.name = "telemetry";
  c.event_types = {"telemetry.*"};
  c.evictable = true;
  return c;
}

EventClass Fiscal() {
  EventClass c;
  c.name = "fiscal";
  c.event_types = {"sale.*", "refund.*"};
  c.fiscal = true;
  return c;
}

class StoreClassesTest : public testing::StoreTest {
 protected:
  void OpenWith(std::vector<EventClass> classes) {
    options_.event_classes = std::move(classes);
    Reopen();
  }
  std::vector<std::string> CommitMany(const std::string& type, int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) ids.push_back(CommitEvent(MakeEvent(type)));
    return ids;
  }
  std::vector<std::string> PendingIds() {
    std::vector<std::string> ids;
    auto pending = store_->ListPending(1000);
    EXPECT_TRUE(pending.ok()) << pending.status();
    if (pending.ok()) {
      for (const PendingEvent& e : *pending) ids.push_back(e.id);
    }
    return ids;
  }
  std::vector<DeadLetter> Dead() {
    auto dead = store_->ListDeadLetters(1000);
    EXPECT_TRUE(dead.ok()) << dead.status();
    return dead.ok() ? *dead : std::vector<DeadLetter>();
  }
};

TEST_F(StoreClassesTest, AHigherPriorityGoesFirstAcrossLanes) {
  EventClass refunds = Fiscal();
  refunds.priority = 9;
  OpenWith({Telemetry(), refunds});
  CommitMany("telemetry.temp", 100);
  const std::string refund = CommitEvent(MakeEvent("refund.created"));
  EXPECT_THAT(DueIds(1), ElementsAre(refund));
  Reopen();  // the order comes from the options, not from memory
  EXPECT_THAT(DueIds(1), ElementsAre(refund));
}

TEST_F(StoreClassesTest, PriorityNeverBreaksAnOrderingKey) {
  EventClass refunds = Fiscal();
  refunds.priority = 9;
  OpenWith({Telemetry(), refunds});
  const std::string first = CommitEvent(MakeEvent("telemetry.temp", "till-7"));
  const std::string refund = CommitEvent(MakeEvent("refund.created", "till-7"));
  EXPECT_THAT(DueIds(), ElementsAre(first));
  ASSERT_OUTBOX_OK(store_->MarkDelivered(DueWithId(first)));
  EXPECT_THAT(DueIds(), ElementsAre(refund));
}

TEST_F(StoreClassesTest, AFullRejectingClassRefusesTheCommitAndWritesNothing) {
  EventClass telemetry = Telemetry();
  telemetry.max_pending_events = 3;
  OpenWith({telemetry, Fiscal()});
  CommitMany("telemetry.temp", 3);
  Txn txn;
  txn.Put("sales", "r", "x");
  txn.Emit(MakeEvent("telemetry.temp"));
  auto over = store_->Commit(txn);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.status().message(), HasSubstr("class telemetry is full"));
  EXPECT_THAT(over.status().message(), HasSubstr("max_pending_events (3)"));
  // Another class is not held by this one's limit.
  CommitMany("sale.created", 5);
  Reopen();
  EXPECT_EQ(store_->Get("sales", "r").status().code(),
            absl::StatusCode::kNotFound);
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 8u);
  ASSERT_EQ(stats->classes.size(), 2u);
  EXPECT_EQ(stats->classes[0].events, 3u);
  EXPECT_EQ(stats->classes[1].events, 5u);
}

// Commits waiting in the writer queue (group commit) count against their
// class before they are durable: committers racing to the last places
// never take the class past its limit.
TEST_F(StoreClassesTest, ConcurrentCommitsNeverPassTheClassLimit) {
  EventClass telemetry = Telemetry();
  telemetry.max_pending_events = 100;
  OpenWith({telemetry});
  std::atomic<int> accepted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        Txn txn;
        txn.Emit(MakeEvent("telemetry.temp"));
        if (store_->Commit(txn).ok()) ++accepted;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(accepted.load(), 100);
  Reopen();
  EXPECT_EQ(store_->GetStats()->pending_events, 100u);
}

// The same, for certain: the first commit's leader is held just before its
// write, so its event is in the writer queue and not yet indexed, when a
// second commit asks for the class's last place. Only what is queued can
// refuse the second one.
TEST_F(StoreClassesTest, ACommitInTheWriterQueueHoldsItsPlace) {
  EventClass telemetry = Telemetry();
  telemetry.max_pending_events = 1;
  OpenWith({telemetry});
  auto* impl = static_cast<StoreImpl*>(store_.get());
  std::atomic<bool> second_done{false};
  std::atomic<int> groups{0};
  internal::TEST_SetCrashHook([&](absl::string_view point) {
    if (point != internal::kGroupBeforeWrite || groups.fetch_add(1) > 0) {
      return;
    }
    // Until the second commit was refused, or (broken) queued behind us.
    while (!second_done.load() && impl->TEST_QueuedWriters() < 2) {
      absl::SleepFor(absl::Milliseconds(1));
    }
  });
  std::thread first([&] {
    Txn txn;
    txn.Emit(MakeEvent("telemetry.temp"));
    EXPECT_OUTBOX_OK(store_->Commit(txn));
  });
  while (impl->TEST_QueuedWriters() < 1) absl::SleepFor(absl::Milliseconds(1));
  Txn txn;
  txn.Emit(MakeEvent("telemetry.temp"));
  const absl::StatusOr<CommitResult> second = store_->Commit(txn);
  second_done = true;
  first.join();
  internal::TEST_SetCrashHook(nullptr);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted)
      << second.status();
  Reopen();
  EXPECT_EQ(store_->GetStats()->pending_events, 1u);
}

TEST_F(StoreClassesTest, DropOldestEvictsTheOldestAsDeadLetters) {
  EventClass telemetry = Telemetry();
  telemetry.max_pending_events = 3;
  telemetry.on_full = EventClass::OnFull::kDropOldest;
  OpenWith({telemetry, Fiscal()});
  const std::string sale = CommitEvent(MakeEvent("sale.created"));
  const std::vector<std::string> t = CommitMany("telemetry.temp", 5);
  Reopen();
  EXPECT_THAT(PendingIds(), ElementsAre(sale, t[2], t[3], t[4]));
  const std::vector<DeadLetter> dead = Dead();
  ASSERT_EQ(dead.size(), 2u);
  for (const DeadLetter& d : dead) {
    EXPECT_THAT(d.reason, StartsWith("evicted: class telemetry was full"));
  }
  EXPECT_THAT((std::vector<std::string>{dead[0].event.id, dead[1].event.id}),
              ::testing::UnorderedElementsAre(t[0], t[1]));
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->evicted_total, 2u);
  EXPECT_EQ(stats->evicted_deleted_total, 0u);
  EXPECT_EQ(stats->dead_letters, 2u);
  // An evicted event can be replayed like any dead letter.
  ASSERT_OUTBOX_OK(store_->Replay(t[0]));
}

// drop_oldest, when what keeps the class full is a commit still in the
// writer queue (not indexed, so not yet evictable): the second commit waits
// for it to be written, then evicts it, and never passes the limit. The
// first commit's leader is held just before its write until the second has
// either waited (the fix) or queued behind it (the limit passed).
TEST_F(StoreClassesTest, DropOldestWaitsForACommitInTheWriterQueue) {
  EventClass telemetry = Telemetry();
  telemetry.max_pending_events = 1;
  telemetry.on_full = EventClass::OnFull::kDropOldest;
  OpenWith({telemetry});
  auto* impl = static_cast<StoreImpl*>(store_.get());
  std::atomic<int> groups{0};
  internal::TEST_SetCrashHook([&](absl::string_view point) {
    if (point != internal::kGroupBeforeWrite || groups.fetch_add(1) > 0) {
      return;
    }
    while (impl->TEST_ClassRoomWaits() == 0 && impl->TEST_QueuedWriters() < 2) {
      absl::SleepFor(absl::Milliseconds(1));
    }
  });
  std::string first;
  std::thread thread([&] {
    Txn txn;
    first = txn.Emit(MakeEvent("telemetry.temp"));
    EXPECT_OUTBOX_OK(store_->Commit(txn));
  });
  while (impl->TEST_QueuedWriters() < 1) absl::SleepFor(absl::Milliseconds(1));
  Txn txn;
  const std::string second = txn.Emit(MakeEvent("telemetry.temp"));
  EXPECT_OUTBOX_OK(store_->Commit(txn));
  thread.join();
  internal::TEST_SetCrashHook(nullptr);
  Reopen();
  EXPECT_THAT(PendingIds(), ElementsAre(second));
  const std::vector<DeadLetter> dead = Dead();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].event.id, first);
  EXPECT_EQ(store_->GetStats()->evicted_total, 1u);
}

TEST_F(StoreClassesTest, EvictionByBytesAndWithoutKeepingCounts) {
  EventClass telemetry = Telemetry();
  telemetry.max_pending_bytes = 1000;
  telemetry.on_full = EventClass::OnFull::kDropOldest;
  telemetry.keep_evicted = false;
  OpenWith({telemetry});
  for (int i = 0; i < 20; ++i) {
    CommitEvent(MakeEvent("telemetry.temp", "", std::string(200, 'p')));
  }
  Reopen();
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  ASSERT_EQ(stats->classes.size(), 1u);
  EXPECT_LE(stats->classes[0].bytes, 1000u);
  EXPECT_GT(stats->classes[0].events, 0u);
  EXPECT_EQ(stats->evicted_total, 20u - stats->classes[0].events);
  EXPECT_EQ(stats->evicted_deleted_total, stats->evicted_total);
  EXPECT_EQ(stats->dead_letters, 0u);
  EXPECT_EQ(stats->pending_events, stats->classes[0].events);
}

TEST_F(StoreClassesTest, ACommitLargerThanItsWholeClassIsRefused) {
  EventClass telemetry = Telemetry();
  telemetry.max_pending_events = 2;
  telemetry.on_full = EventClass::OnFull::kDropOldest;
  OpenWith({telemetry});
  const std::vector<std::string> kept = CommitMany("telemetry.temp", 2);
  Txn txn;
  for (int i = 0; i < 3; ++i) txn.Emit(MakeEvent("telemetry.temp"));
  auto over = store_->Commit(txn);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.status().message(), HasSubstr("even with every older"));
  Reopen();
  EXPECT_EQ(PendingIds(), kept);
  EXPECT_TRUE(Dead().empty());
}

TEST_F(StoreClassesTest, AFiscalClassIsNeverEvicted) {
  EventClass telemetry = Telemetry();
  telemetry.max_pending_events = 2;
  telemetry.on_full = EventClass::OnFull::kDropOldest;
  EventClass fiscal = Fiscal();
  fiscal.max_pending_events = 3;
  OpenWith({telemetry, fiscal});
  const std::vector<std::string> sales = CommitMany("sale.created", 3);
  CommitMany("telemetry.temp", 10);
  Txn txn;
  txn.Emit(MakeEvent("sale.created"));
  EXPECT_EQ(store_->Commit(txn).status().code(),
            absl::StatusCode::kResourceExhausted);
  Reopen();
  for (const DeadLetter& d : Dead()) {
    EXPECT_THAT(d.event.type, StartsWith("telemetry."));
  }
  for (const std::string& id : sales) EXPECT_OUTBOX_OK(store_->FindPending(id));
}

TEST_F(StoreClassesTest, ExpiryGivesUpOnlyOldEventsOfItsClass) {
  EventClass telemetry = Telemetry();
  telemetry.expire_after = absl::Hours(1);
  OpenWith({telemetry, Fiscal()});
  const std::string old_reading = CommitEvent(MakeEvent("telemetry.temp"));
  const std::string sale = CommitEvent(MakeEvent("sale.created"));
  clock_.Advance(absl::Minutes(50));
  const std::string new_reading = CommitEvent(MakeEvent("telemetry.temp"));
  clock_.Advance(absl::Minutes(11));
  auto expired = store_->ExpirePending(clock_.Now(), 100);
  ASSERT_OUTBOX_OK(expired);
  EXPECT_EQ(*expired, 1u);
  Reopen();
  EXPECT_THAT(PendingIds(), ElementsAre(sale, new_reading));
  const std::vector<DeadLetter> dead = Dead();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].event.id, old_reading);
  EXPECT_THAT(dead[0].reason, StartsWith("expired: pending longer than"));
  EXPECT_EQ(store_->GetStats()->expired_total, 1u);
  // Nothing more is old enough.
  EXPECT_EQ(*store_->ExpirePending(clock_.Now(), 100), 0u);
}

// Only a class with an expire_after expires: a drop_oldest class beside
// one that expires keeps its old events however old they are.
TEST_F(StoreClassesTest, AClassWithoutExpireAfterIsNeverExpired) {
  EventClass telemetry = Telemetry();
  telemetry.max_pending_events = 100;
  telemetry.on_full = EventClass::OnFull::kDropOldest;
  EventClass debug;
  debug.name = "debug";
  debug.event_types = {"debug.*"};
  debug.evictable = true;
  debug.expire_after = absl::Hours(1);
  OpenWith({telemetry, debug});
  const std::vector<std::string> readings = CommitMany("telemetry.temp", 3);
  const std::string trace = CommitEvent(MakeEvent("debug.trace"));
  clock_.Advance(absl::Hours(24));
  auto expired = store_->ExpirePending(clock_.Now(), 100);
  ASSERT_OUTBOX_OK(expired);
  EXPECT_EQ(*expired, 1u);
  Reopen();
  EXPECT_EQ(PendingIds(), readings);
  const std::vector<DeadLetter> dead = Dead();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].event.id, trace);
}

// keep_evicted: false deletes evicted events only: an expired one is a dead
// letter whatever keep_evicted says (docs/configuration.md, event classes).
TEST_F(StoreClassesTest, AnExpiredEventIsADeadLetterWhateverKeepEvicted) {
  EventClass telemetry = Telemetry();
  telemetry.expire_after = absl::Hours(1);
  telemetry.keep_evicted = false;
  OpenWith({telemetry});
  const std::string reading = CommitEvent(MakeEvent("telemetry.temp"));
  clock_.Advance(absl::Minutes(61));
  ASSERT_OUTBOX_OK(store_->ExpirePending(clock_.Now(), 100));
  Reopen();
  EXPECT_TRUE(PendingIds().empty());
  const std::vector<DeadLetter> dead = Dead();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].event.id, reading);
  EXPECT_THAT(dead[0].reason, StartsWith("expired: "));
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->expired_total, 1u);
  EXPECT_EQ(stats->evicted_deleted_total, 0u);
}

// A failed attempt rewrites the entry (attempts, error, next attempt), and
// its size changes: the class's bytes, which its max_pending_bytes is
// judged by, follow it. A reopen counts them again from the entries, so the
// open store's figure must be the same before and after.
TEST_F(StoreClassesTest, AClassByteCountFollowsItsEntriesAcrossRetries) {
  OpenWith({Telemetry()});
  const std::vector<std::string> ids = CommitMany("telemetry.temp", 2);
  AttemptRecord attempt;
  attempt.error = std::string(300, 'e');  // a long error: the entry grows
  attempt.http_status = 503;
  attempt.next_attempt = clock_.Now();
  ASSERT_OUTBOX_OK(store_->RecordAttempt(DueWithId(ids[0]), attempt));
  Settlement retried;
  retried.kind = Settlement::Kind::kAttempt;
  retried.event = DueWithId(ids[1]);
  retried.attempt = attempt;
  ASSERT_OUTBOX_OK(store_->Settle({retried}));
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  ASSERT_EQ(stats->classes.size(), 1u);
  const uint64_t open_bytes = stats->classes[0].bytes;
  EXPECT_EQ(open_bytes, stats->pending_bytes);
  Reopen();
  stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->classes[0].bytes, open_bytes);
  // Delivered, the class holds nothing: not a remainder of the old sizes.
  ASSERT_OUTBOX_OK(store_->MarkDelivered(DueWithId(ids[0])));
  ASSERT_OUTBOX_OK(store_->RecordAttempt(DueWithId(ids[1]), attempt));
  ASSERT_OUTBOX_OK(store_->MarkDelivered(DueWithId(ids[1])));
  stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->classes[0].events, 0u);
  EXPECT_EQ(stats->classes[0].bytes, 0u);
}

TEST_F(StoreClassesTest,
       AnEventCommittedUnderAStaleClockAgesOnTheMonotonicOne) {
  EventClass telemetry = Telemetry();
  telemetry.expire_after = absl::Hours(1);
  OpenWith({telemetry});
  CommitEvent(MakeEvent("telemetry.temp"));  // raises the store's clock mark
  clock_.Set(clock_.Now() - absl::Hours(24 * 365));  // a stale RTC at boot
  const std::string stale = CommitEvent(MakeEvent("telemetry.temp"));
  clock_.Set(clock_.Now() + absl::Hours(24 * 365));  // NTP puts it right
  // By its stored time it is a year old; by the clock that ran, seconds.
  ASSERT_OUTBOX_OK(store_->ExpirePending(clock_.Now() + absl::Hours(2), 100));
  EXPECT_OUTBOX_OK(store_->FindPending(stale));
  clock_.Advance(absl::Minutes(61));
  ASSERT_OUTBOX_OK(store_->ExpirePending(clock_.Now(), 100));
  Reopen();
  EXPECT_TRUE(PendingIds().empty());
  EXPECT_EQ(Dead().size(), 2u);
}

// A till restarted more often than expire_after: an event committed behind
// the clock mark once aged from each open (reset by every restart), so it
// never expired, and as the first young event of its class it held every
// later one back, until the store filled and refused sales. Its age now
// runs on the store clock from its commit, and a young one is passed over.
TEST_F(StoreClassesTest, AnEventCommittedBehindTheMarkNeverPinsItsClass) {
  EventClass telemetry = Telemetry();
  telemetry.expire_after = absl::Hours(1);
  OpenWith({telemetry, Fiscal()});
  CommitEvent(MakeEvent("sale.created"));  // the store's clock mark: now
  const absl::Time right = clock_.Now();
  clock_.Set(right - absl::Minutes(30));  // behind the mark, by minutes
  const std::string behind = CommitEvent(MakeEvent("telemetry.temp"));
  ASSERT_TRUE(store_->FindPending(behind).ok());
  clock_.Set(right);
  const std::string next = CommitEvent(MakeEvent("telemetry.temp"));
  // Restarted every 40 minutes for two hours.
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(absl::Minutes(40));
    Reopen();
  }
  auto expired = store_->ExpirePending(clock_.Now(), 100);
  ASSERT_OUTBOX_OK(expired);
  EXPECT_EQ(*expired, 2u);
  Reopen();
  std::vector<std::string> dead;
  for (const DeadLetter& d : Dead()) dead.push_back(d.event.id);
  EXPECT_THAT(dead, ::testing::UnorderedElementsAre(behind, next));
}

// A young event committed behind the mark is passed over, not a stop: the
// events after it in commit order still expire by their own age.
TEST_F(StoreClassesTest, AYoungEventCommittedBehindTheMarkIsPassedOver) {
  EventClass telemetry = Telemetry();
  telemetry.expire_after = absl::Hours(1);
  OpenWith({telemetry, Fiscal()});
  CommitEvent(MakeEvent("sale.created"));  // the store's clock mark: now
  const absl::Time right = clock_.Now();
  clock_.Set(right - absl::Minutes(30));
  const std::string behind = CommitEvent(MakeEvent("telemetry.temp"));
  clock_.Set(right);
  const std::string next = CommitEvent(MakeEvent("telemetry.temp"));
  // Two hours pass by the wall clock (the agent's trusted time), none by the
  // store clock (the till was off): `next` is old, `behind` is not.
  clock_.Set(right + absl::Hours(2));
  auto expired = store_->ExpirePending(clock_.Now(), 100);
  ASSERT_OUTBOX_OK(expired);
  EXPECT_EQ(*expired, 1u);
  EXPECT_OUTBOX_OK(store_->FindPending(behind));
  EXPECT_OUTBOX_OK(store_->FindDeadLetter(next));
}

// A board that booted minutes behind (a slow RTC, not a year off): an event
// committed more than a minute behind the store's mark is flagged, and ages
// on the store clock from its commit, never by its stored time. The mark comes
// from an event of no class, so nothing older in the class holds the check up.
TEST_F(StoreClassesTest,
       AnEventCommittedMinutesBehindTheMarkAgesOnTheStoreClock) {
  EventClass telemetry = Telemetry();
  telemetry.expire_after = absl::Hours(1);
  OpenWith({telemetry});
  CommitEvent(MakeEvent("sale.created"));  // the store's mark: now
  const absl::Time right = clock_.Now();
  clock_.Set(right - absl::Minutes(10));
  const std::string behind = CommitEvent(MakeEvent("telemetry.temp"));
  clock_.Set(right);  // NTP puts it right
  clock_.Advance(absl::Minutes(55));
  // 65 minutes old by its stored time; 55 by the clock that ran.
  auto expired = store_->ExpirePending(clock_.Now(), 100);
  ASSERT_OUTBOX_OK(expired);
  EXPECT_EQ(*expired, 0u);
  EXPECT_OUTBOX_OK(store_->FindPending(behind));
  clock_.Advance(absl::Minutes(6));
  expired = store_->ExpirePending(clock_.Now(), 100);
  ASSERT_OUTBOX_OK(expired);
  EXPECT_EQ(*expired, 1u);
  Reopen();
  const std::vector<DeadLetter> dead = Dead();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].event.id, behind);
}

}  // namespace
}  // namespace outbox
