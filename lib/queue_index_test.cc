// Copyright (c) edge-outbox authors.
//
// QueueIndex against a plain model: after any sequence of adds, removals of
// ready events and reschedules, the ready set is exactly the first pending
// event of each ordering key plus every unkeyed event.

#include "lib/queue_index.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

struct ModelEvent {
  std::string key;
  int64_t due_ms;
};

TEST(QueueIndexTest, ReadySetMatchesModelUnderRandomOperations) {
  absl::BitGen gen;
  QueueIndex index;
  std::map<uint64_t, ModelEvent> pending;  // by seq: commit order
  uint64_t next_seq = 0;
  for (int step = 0; step < 20000; ++step) {
    const int op = absl::Uniform(gen, 0, 10);
    if (op < 5 || pending.empty()) {
      const int k = absl::Uniform(gen, 0, 6);
      ModelEvent e{k == 0 ? "" : absl::StrCat("k", k),
                   absl::Uniform<int64_t>(gen, 0, 1000)};
      index.Add(next_seq, e.key, e.due_ms);
      pending[next_seq++] = e;
    } else {
      // Pick a ready event (the only kind the agent removes or retries).
      const QueueIndex::Ready& ready = index.ready();
      auto it = ready.begin();
      std::advance(it, absl::Uniform<size_t>(gen, 0, ready.size()));
      const uint64_t seq = it->second;
      ModelEvent& e = pending.at(seq);
      if (op < 8) {
        index.Remove(seq, e.key, e.due_ms);
        pending.erase(seq);
      } else {
        const int64_t due = absl::Uniform<int64_t>(gen, 0, 1000);
        index.Reschedule(seq, e.key, e.due_ms, due);
        e.due_ms = due;
      }
    }
    std::set<std::pair<int64_t, uint64_t>> expected;
    std::set<std::string> seen_keys;
    for (const auto& [seq, e] : pending) {
      if (e.key.empty() || seen_keys.insert(e.key).second) {
        expected.insert({e.due_ms, seq});
      }
    }
    const std::set<std::pair<int64_t, uint64_t>> actual(index.ready().begin(),
                                                        index.ready().end());
    ASSERT_EQ(actual, expected) << "after step " << step;
  }
}

TEST(QueueIndexTest, RemovingFromTheMiddleKeepsTheHead) {
  QueueIndex index;
  index.Add(1, "k", 10);
  index.Add(2, "k", 20);
  index.Add(3, "k", 30);
  index.Remove(2, "k", 20);
  ASSERT_EQ(index.ready().size(), 1u);
  EXPECT_EQ(index.ready().begin()->second, 1u);
  index.Remove(1, "k", 10);
  ASSERT_EQ(index.ready().size(), 1u);
  EXPECT_EQ(index.ready().begin()->second, 3u);
  EXPECT_EQ(index.keyed_events(), 1u);
}

}  // namespace
}  // namespace outbox
