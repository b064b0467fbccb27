// Copyright (c) edge-outbox authors.
//
// NextDue beside a large backlog for a destination that cannot be reached
// (issue 11, item 1).
//
// Invariant: a lane the caller closes costs one gate call, however many
// events wait in it. NextDue's work (gate and skip calls, and what RocksDB
// reads, counted by PerfContext, never timed) is the same with 20 or 20,000
// events in the closed lane; the open lanes still give their events in (due,
// seq) order, and an event waiting in a closed lane still holds the later
// events of its ordering key in every other lane.

#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/rocks_work.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using testing::MakeEvent;

constexpr int kBacklog = 20000;

// What one NextDue call did.
struct NextDueWork {
  std::vector<std::string> ids;
  int gate_calls = 0;
  int skip_calls = 0;
  testing::RocksWork rocks;
};

class ClosedLaneTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    // Filling the backlog is not what is measured; fsync per commit would
    // only make it slow.
    options_.sync = false;
    StoreTest::SetUp();
  }

  // Commits `n` events for `destination` (100 per transaction); returns
  // their ids.
  std::vector<std::string> CommitFor(const std::string& destination, int n,
                                     const std::string& ordering_key = "") {
    std::vector<std::string> ids;
    while (n > 0) {
      Txn txn;
      for (int i = 0; i < 100 && n > 0; ++i, --n) {
        Event e = MakeEvent("sale", ordering_key, R"({"total":1250})");
        e.destination = destination;
        ids.push_back(txn.Emit(e));
      }
      EXPECT_OUTBOX_OK(store_->Commit(txn));
    }
    return ids;
  }

  // NextDue(limit) with the lanes of destination `closed` closed.
  NextDueWork NextDueClosing(const std::string& closed, size_t limit = 8) {
    NextDueWork w;
    w.rocks = testing::CountRocksWork([&] {
      auto due = store_->NextDue(
          limit,
          [&](const Lane& lane) {
            ++w.gate_calls;
            return lane.destination == closed ? LaneGate::kClosed
                                              : LaneGate::kOpen;
          },
          [&](uint64_t) {
            ++w.skip_calls;
            return false;
          });
      ASSERT_OUTBOX_OK(due);
      for (const PendingEvent& e : due->events) w.ids.push_back(e.id);
    });
    return w;
  }

  void RetryAt(const std::string& id, absl::Time at) {
    AttemptRecord attempt;
    attempt.error = "HTTP 503";
    attempt.next_attempt = at;
    ASSERT_OUTBOX_OK(store_->RecordAttempt(DueWithId(id), attempt));
  }
};

TEST_F(ClosedLaneTest, BacklogInAClosedLaneAddsNoWorkToNextDue) {
  const std::vector<std::string> online = CommitFor("online", 20);
  CommitFor("offline", 20);
  const NextDueWork small = NextDueClosing("offline");
  CommitFor("offline", kBacklog - 20);
  const NextDueWork big = NextDueClosing("offline");
  std::printf("NextDue(8), closed lane of 20: gates %d, skips %d, rocks %s\n",
              small.gate_calls, small.skip_calls,
              ::testing::PrintToString(small.rocks).c_str());
  std::printf("NextDue(8), closed lane of %d: gates %d, skips %d, rocks %s\n",
              kBacklog, big.gate_calls, big.skip_calls,
              ::testing::PrintToString(big.rocks).c_str());

  EXPECT_EQ(big.ids,
            std::vector<std::string>(online.begin(), online.begin() + 8));
  EXPECT_EQ(big.ids, small.ids);
  EXPECT_EQ(big.gate_calls, 2);  // once per lane with something due
  EXPECT_EQ(big.skip_calls, 8);  // only the events it returns
  EXPECT_EQ(big.rocks.value_bytes_read, small.rocks.value_bytes_read);
  EXPECT_EQ(big.rocks.iterator_bytes_read, 0u);  // point reads only
  EXPECT_EQ(big.rocks.memtable_seeks, 0u);
  EXPECT_EQ(big.rocks.keys_skipped, 0u);
  EXPECT_EQ(big.rocks.tombstones_skipped, 0u);
}

TEST_F(ClosedLaneTest, OpenLanesGiveDueThenSeqOrderBesideAClosedBacklog) {
  const absl::Time t0 = clock_.Now();
  const std::vector<std::string> a = CommitFor("online-a", 5);
  RetryAt(a[0], t0 + absl::Seconds(5));
  RetryAt(a[1], t0 + absl::Seconds(3));
  clock_.Advance(absl::Seconds(1));
  const std::vector<std::string> b = CommitFor("online-b", 1);  // due t0 + 1 s
  CommitFor("offline", kBacklog);
  clock_.Advance(absl::Seconds(4));  // everything is due
  EXPECT_THAT(NextDueClosing("offline", 100).ids,
              ElementsAre(a[2], a[3], a[4], b[0], a[1], a[0]));
  EXPECT_THAT(NextDueClosing("offline", 4).ids,
              ElementsAre(a[2], a[3], a[4], b[0]));
}

TEST_F(ClosedLaneTest, EventInAClosedLaneHoldsItsKeyInTheOpenLanes) {
  const std::string held = CommitFor("offline", 1, "till-1")[0];
  const std::string behind = CommitFor("online", 1, "till-1")[0];
  const std::string other = CommitFor("online", 1, "till-2")[0];
  EXPECT_THAT(NextDueClosing("offline").ids, ElementsAre(other));
  ASSERT_OUTBOX_OK(
      store_->MarkDelivered(DueWithId(held)));  // the lane reopened
  EXPECT_THAT(NextDueClosing("offline").ids, ElementsAre(behind, other));
}

}  // namespace
}  // namespace outbox
