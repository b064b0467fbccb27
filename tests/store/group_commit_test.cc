// Copyright (c) edge-outbox authors.
//
// Group commit: concurrent commits share one synced write, each is
// acknowledged only after the write that covers it, and seqs and counters
// stay exact. The crash hook at group.before_write (a leader about to write
// its group) holds a leader back so that a group forms for certain, and cuts
// the power there to see what an acknowledged writer could lose.

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/crash_points.h"
#include "tests/store/power_cut_store.h"

namespace outbox {
namespace {

class GroupCommitTest : public testing::PowerCutStoreTest {
 protected:
  void TearDown() override { internal::TEST_SetCrashHook(nullptr); }

  // Holds the first leader at group.before_write until `followers` more
  // writers have queued behind it; counts every group written.
  void HoldFirstLeaderFor(size_t followers) {
    internal::TEST_SetCrashHook([this, followers](absl::string_view point) {
      if (point != internal::kGroupBeforeWrite) return;
      if (groups_.fetch_add(1) == 0) {
        while (store_->TEST_QueuedWriters() < followers + 1) {
          absl::SleepFor(absl::Milliseconds(1));
        }
      }
    });
  }

  // Commits sale-<i> for i in [0, n) from n threads at once; returns each
  // commit's status.
  std::vector<absl::Status> CommitConcurrently(int n) {
    std::vector<absl::Status> results(n);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([this, i, &results] {
        results[i] = CommitSale(absl::StrCat("sale-", i)).status();
      });
    }
    for (std::thread& t : threads) t.join();
    return results;
  }

  // Holds the first leader until the other seven have queued, then cuts the
  // power at the second group's write.
  void CutAtTheSecondGroup() {
    internal::TEST_SetCrashHook([this](absl::string_view point) {
      if (point != internal::kGroupBeforeWrite) return;
      if (groups_.fetch_add(1) == 0) {
        while (store_->TEST_QueuedWriters() < 8) {
          absl::SleepFor(absl::Milliseconds(1));
        }
      } else {
        fs_->Kill();  // the power goes before the group's write
      }
    });
  }

  std::atomic<int> groups_{0};
};

TEST_F(GroupCommitTest, ConcurrentCommitsAreAllThereWithExactCounters) {
  Open();
  constexpr int kThreads = 8, kEach = 50;
  std::vector<std::thread> threads;
  std::vector<std::vector<std::string>> ids(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto r = CommitSale(absl::StrCat("sale-", t, "-", i));
        ASSERT_OUTBOX_OK(r);
        ids[t].push_back(r->event_ids.at(0));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CutPowerAndReopen();  // every acknowledged commit was synced
  auto pending = store_->ListPending(kThreads * kEach + 1);
  ASSERT_OUTBOX_OK(pending);
  ASSERT_EQ(pending->size(), size_t{kThreads * kEach});
  std::set<std::string> stored;
  for (size_t i = 0; i < pending->size(); ++i) {
    EXPECT_EQ((*pending)[i].seq, i);  // seqs dense, in commit order
    stored.insert((*pending)[i].id);
  }
  for (const auto& thread_ids : ids) {
    for (const std::string& id : thread_ids) EXPECT_EQ(stored.count(id), 1u);
  }
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, size_t{kThreads * kEach});
}

TEST_F(GroupCommitTest, FollowersShareOneWrite) {
  Open();
  HoldFirstLeaderFor(7);
  const std::vector<absl::Status> results = CommitConcurrently(8);
  for (const absl::Status& s : results) EXPECT_OUTBOX_OK(s);
  // The first leader wrote alone; the seven that queued behind it, in one.
  EXPECT_EQ(groups_.load(), 2);
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 8u);
}

// The power goes while the second group's leader is about to write: none of
// the seven writers in that group may have been told OK.
TEST_F(GroupCommitTest, NoFollowerIsAcknowledgedBeforeTheSync) {
  Open();
  CutAtTheSecondGroup();
  const std::vector<absl::Status> results = CommitConcurrently(8);
  int acknowledged = 0;
  for (const absl::Status& s : results) acknowledged += s.ok();
  EXPECT_EQ(acknowledged, 1);  // only the first leader, written alone
  internal::TEST_SetCrashHook(nullptr);
  CutPowerAndReopen();
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 1u);
}

// A group is synced if any of its writers asked, not only its leader: a
// synced commit that queued behind an unsynced settlement (the agent's
// round) in one group is told OK only after that group's fsync.
TEST_F(GroupCommitTest, ACommitBehindAnUnsyncedSettlementIsSynced) {
  Open();
  ASSERT_OUTBOX_OK(CommitSale("sale-0"));
  absl::StatusOr<DueEvents> due = store_->NextDue(1);
  ASSERT_OUTBOX_OK(due);
  ASSERT_EQ(due->events.size(), 1u);
  Settlement delivered;
  delivered.event = due->events[0];
  // The first leader (sale-x) is held until the settlement and then sale-1
  // queued behind it: those two form the second group, the settlement first.
  HoldFirstLeaderFor(2);
  std::thread first([this] { EXPECT_OUTBOX_OK(CommitSale("sale-x")); });
  while (store_->TEST_QueuedWriters() < 1)
    absl::SleepFor(absl::Milliseconds(1));
  std::thread settler(
      [this, &delivered] { EXPECT_OUTBOX_OK(store_->Settle({delivered})); });
  while (store_->TEST_QueuedWriters() < 2)
    absl::SleepFor(absl::Milliseconds(1));
  const absl::StatusOr<CommitResult> acknowledged = CommitSale("sale-1");
  first.join();
  settler.join();
  ASSERT_OUTBOX_OK(acknowledged);
  EXPECT_EQ(groups_.load(), 2);
  internal::TEST_SetCrashHook(nullptr);
  CutPowerAndReopen();
  EXPECT_OUTBOX_OK(store_->Get("sales", "sale-1"));
}

// The broken variant acknowledges the followers before the group's write:
// the same cut then loses commits that were told OK. (The power-cut soak
// must catch this; see broken_store_soak_test.)
TEST_F(GroupCommitTest, BrokenVariantAcknowledgesCommitsThatAreLost) {
  StoreTestOptions broken;
  broken.ack_group_before_sync = true;
  Open(broken);
  CutAtTheSecondGroup();
  const std::vector<absl::Status> results = CommitConcurrently(8);
  int acknowledged = 0;
  for (const absl::Status& s : results) acknowledged += s.ok();
  internal::TEST_SetCrashHook(nullptr);
  CutPowerAndReopen();
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(acknowledged, 7);            // the first leader and six followers
  EXPECT_EQ(stats->pending_events, 1u);  // six acknowledged commits lost
}

}  // namespace
}  // namespace outbox
