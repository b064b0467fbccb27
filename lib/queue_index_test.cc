// Copyright (c) edge-outbox authors.
//
// QueueIndex against a plain model: after any sequence of adds, removals of
// ready events and reschedules, each lane's ready set is exactly the first
// pending event of each ordering key plus every unkeyed event of that lane;
// and PickDue takes what is due, in order, from open lanes only.

#include "lib/queue_index.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;

struct ModelEvent {
  std::string key;
  uint32_t lane;
  int64_t due;
};

std::set<std::pair<int64_t, uint64_t>> AllReady(const QueueIndex& index) {
  std::set<std::pair<int64_t, uint64_t>> all;
  for (uint32_t l = 0; l < index.lane_count(); ++l) {
    for (const auto& r : index.ready(l)) all.insert(r);
  }
  return all;
}

LaneGate Open(uint32_t) { return LaneGate::kOpen; }
bool NoSkip(uint64_t) { return false; }

TEST(QueueIndexTest, ReadySetMatchesModelUnderRandomOperations) {
  absl::BitGen gen;
  QueueIndex index;
  const uint32_t lanes[] = {index.LaneOf("", "sale.created"),
                            index.LaneOf("", "sale.paid"),
                            index.LaneOf("backend", "sale.created")};
  std::map<uint64_t, ModelEvent> pending;  // by seq: commit order
  uint64_t next_seq = 0;
  for (int step = 0; step < 20000; ++step) {
    const int op = absl::Uniform(gen, 0, 10);
    if (op < 5 || pending.empty()) {
      const int k = absl::Uniform(gen, 0, 6);
      ModelEvent e{k == 0 ? "" : absl::StrCat("k", k),
                   lanes[absl::Uniform(gen, 0, 3)],
                   absl::Uniform<int64_t>(gen, 0, 1000)};
      index.Add(next_seq, e.key, e.lane, e.due, 100);
      pending[next_seq++] = e;
    } else {
      // Pick a ready event (the only kind the agent removes or retries).
      const auto ready = AllReady(index);
      auto it = ready.begin();
      std::advance(it, absl::Uniform<size_t>(gen, 0, ready.size()));
      const uint64_t seq = it->second;
      ModelEvent& e = pending.at(seq);
      if (op < 8) {
        index.Remove(seq, e.key);
        pending.erase(seq);
      } else {
        e.due = absl::Uniform<int64_t>(gen, 0, 1000);
        index.Reschedule(seq, e.key, e.due, 100);
      }
    }
    std::set<std::pair<int64_t, uint64_t>> expected;
    std::set<std::string> seen_keys;
    for (const auto& [seq, e] : pending) {
      if (e.key.empty() || seen_keys.insert(e.key).second) {
        expected.insert({e.due, seq});
      }
    }
    ASSERT_EQ(AllReady(index), expected) << "after step " << step;
    ASSERT_EQ(index.seqs().size(), pending.size());
    if (!pending.empty()) {
      ASSERT_EQ(index.seqs().begin()->first, pending.begin()->first);
    }
  }
}

TEST(QueueIndexTest, RemovingFromTheMiddleKeepsTheHead) {
  QueueIndex index;
  const uint32_t lane = index.LaneOf("", "t");
  index.Add(1, "k", lane, 10, 100);
  index.Add(2, "k", lane, 20, 100);
  index.Add(3, "k", lane, 30, 100);
  index.Remove(2, "k");
  ASSERT_EQ(index.ready(lane).size(), 1u);
  EXPECT_EQ(index.ready(lane).begin()->second, 1u);
  index.Remove(1, "k");
  ASSERT_EQ(index.ready(lane).size(), 1u);
  EXPECT_EQ(index.ready(lane).begin()->second, 3u);
  EXPECT_EQ(index.keyed_events(), 1u);
}

TEST(QueueIndexTest, LanesAreOnePerDestinationAndType) {
  QueueIndex index;
  const uint32_t a = index.LaneOf("", "sale.created");
  EXPECT_EQ(index.LaneOf("", "sale.created"), a);
  EXPECT_NE(index.LaneOf("", "sale.paid"), a);
  EXPECT_NE(index.LaneOf("sale.created", ""), a);
  EXPECT_EQ(index.lane_count(), 3u);
  EXPECT_EQ(index.lane(a).type, "sale.created");
}

TEST(QueueIndexTest, ATargetMakesALaneOfItsOwn) {
  QueueIndex index;
  const uint32_t plain = index.LaneOf("", "order");
  const uint32_t held = index.LaneOf("", "order", "high_value");
  EXPECT_NE(held, plain);
  EXPECT_EQ(index.LaneOf("", "order", "high_value"), held);
  EXPECT_EQ(index.LaneOf("", "order"), plain);
  EXPECT_EQ(index.lane(held).target, "high_value");
  EXPECT_EQ(index.lane(plain).target, "");
}

TEST(QueueIndexTest, RelaneMovesAReadyEvent) {
  QueueIndex index;
  const uint32_t any = index.LaneOf("", "order");
  const uint32_t down = index.LaneOf("", "order", "high_value");
  index.Add(1, "sale-1", any, 10, 100);
  index.Add(2, "", any, 20, 100);
  index.Relane(1, down);
  EXPECT_THAT(index.ready(down),
              ElementsAre(std::pair<int64_t, uint64_t>{10, 1}));
  EXPECT_THAT(index.ready(any),
              ElementsAre(std::pair<int64_t, uint64_t>{20, 2}));
  EXPECT_EQ(index.Find(1)->lane, down);
  // Closing its new lane holds it, and only it.
  const QueueIndex::Picked picked = index.PickDue(
      50, 10,
      [&](uint32_t lane) {
        return lane == down ? LaneGate::kClosed : LaneGate::kOpen;
      },
      NoSkip);
  EXPECT_THAT(picked.seqs, ElementsAre(2));
  index.Relane(1, any);  // and back
  EXPECT_TRUE(index.ready(down).empty());
  EXPECT_EQ(index.ready(any).size(), 2u);
}

TEST(QueueIndexTest, RelaneKeepsAnOrderingKeysFollowerWaiting) {
  QueueIndex index;
  const uint32_t any = index.LaneOf("", "order");
  const uint32_t down = index.LaneOf("", "order", "high_value");
  const uint32_t up = index.LaneOf("", "order", "inventory");
  index.Add(1, "sale-1", any, 0, 100);
  index.Add(2, "sale-1", any, 0, 100);
  index.Relane(1, down);
  index.Relane(2, up);  // not its key's head: still not ready anywhere
  EXPECT_TRUE(index.ready(up).empty());
  EXPECT_TRUE(index.ready(any).empty());
  const QueueIndex::Picked held = index.PickDue(
      50, 10,
      [&](uint32_t lane) {
        return lane == down ? LaneGate::kClosed : LaneGate::kOpen;
      },
      NoSkip);
  EXPECT_TRUE(held.seqs.empty());  // the follower does not overtake
  index.Remove(1, "sale-1");
  EXPECT_EQ(index.ready(up).size(), 1u);  // ready in the lane it was given
  index.Relane(99, up);                   // not indexed: no-op
  EXPECT_EQ(index.ready_count(), 1u);
}

// A lane's pending count is every event in it, ready or waiting behind its
// key, and follows an event that is relaned or removed.
TEST(QueueIndexTest, PendingCountsEveryEventOfTheLane) {
  QueueIndex index;
  const uint32_t any = index.LaneOf("", "order");
  const uint32_t down = index.LaneOf("", "order", "high_value");
  index.Add(1, "sale-1", any, 0, 100);
  index.Add(2, "sale-1", any, 0, 100);  // waits behind 1
  index.Add(3, "", any, 0, 100);
  EXPECT_EQ(index.pending(any), 3u);
  index.Relane(2, down);
  EXPECT_EQ(index.pending(any), 2u);
  EXPECT_EQ(index.pending(down), 1u);
  index.Remove(1, "sale-1");
  index.Remove(2, "sale-1");
  index.Remove(2, "sale-1");  // not indexed any more: no-op
  EXPECT_EQ(index.pending(any), 1u);
  EXPECT_EQ(index.pending(down), 0u);
}

TEST(QueueIndexTest, PickDueTakesDueEventsInOrderAcrossLanes) {
  QueueIndex index;
  const uint32_t a = index.LaneOf("", "a"), b = index.LaneOf("", "b");
  index.Add(0, "", a, 30, 100);
  index.Add(1, "", b, 10, 100);
  index.Add(2, "", a, 20, 100);
  index.Add(3, "", b, 99, 100);
  const QueueIndex::Picked picked = index.PickDue(50, 10, Open, NoSkip);
  EXPECT_THAT(picked.seqs, ElementsAre(1, 2, 0));
  EXPECT_EQ(picked.next_due, 99);
}

TEST(QueueIndexTest, ClosedLaneIsNeverWalked) {
  QueueIndex index;
  const uint32_t offline = index.LaneOf("", "offline");
  const uint32_t online = index.LaneOf("", "online");
  for (uint64_t seq = 0; seq < 10000; ++seq)
    index.Add(seq, "", offline, 0, 100);
  index.Add(10000, "", online, 5, 100);
  int gate_calls = 0, skip_calls = 0;
  const QueueIndex::Picked picked = index.PickDue(
      100, 8,
      [&](uint32_t lane) {
        ++gate_calls;
        return lane == offline ? LaneGate::kClosed : LaneGate::kOpen;
      },
      [&](uint64_t) {
        ++skip_calls;
        return false;
      });
  EXPECT_THAT(picked.seqs, ElementsAre(10000));
  EXPECT_EQ(gate_calls, 2);  // once per lane with something due
  EXPECT_EQ(skip_calls, 1);  // only the candidate of the open lane
}

TEST(QueueIndexTest, GateOneTakesASingleEvent) {
  QueueIndex index;
  const uint32_t lane = index.LaneOf("", "t");
  for (uint64_t seq = 0; seq < 5; ++seq) index.Add(seq, "", lane, 0, 100);
  const QueueIndex::Picked picked = index.PickDue(
      10, 8, [](uint32_t) { return LaneGate::kOne; }, NoSkip);
  EXPECT_THAT(picked.seqs, ElementsAre(0));
}

TEST(QueueIndexTest, SkippedEventsAreNotTakenAndDoNotCountAgainstTheLimit) {
  QueueIndex index;
  const uint32_t lane = index.LaneOf("", "t");
  for (uint64_t seq = 0; seq < 5; ++seq) index.Add(seq, "", lane, 0, 100);
  const QueueIndex::Picked picked =
      index.PickDue(10, 2, Open, [](uint64_t seq) { return seq < 2; });
  EXPECT_THAT(picked.seqs, ElementsAre(2, 3));
  EXPECT_EQ(picked.next_due, 10);  // more is due: cut by the limit
}

TEST(QueueIndexTest, NothingDueReportsTheEarliestDueTime) {
  QueueIndex index;
  const uint32_t lane = index.LaneOf("", "t");
  index.Add(0, "", lane, 70, 100);
  index.Add(1, "", lane, 60, 100);
  const QueueIndex::Picked picked = index.PickDue(10, 8, Open, NoSkip);
  EXPECT_TRUE(picked.seqs.empty());
  EXPECT_EQ(picked.next_due, 60);
}

TEST(QueueIndexTest, UndecodableEntriesHoldTheHead) {
  QueueIndex index;
  const uint32_t lane = index.LaneOf("", "t");
  index.AddUndecodable(0, absl::DataLossError("damaged"));
  index.Add(1, "", lane, 0, 100);
  EXPECT_EQ(index.seqs().begin()->first, 0u);
  index.RemoveUndecodable(0);
  EXPECT_EQ(index.seqs().begin()->first, 1u);
  EXPECT_TRUE(index.undecodable().empty());
}

}  // namespace
}  // namespace outbox
