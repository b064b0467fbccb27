// Copyright (c) edge-outbox authors.
//
// Reads of a queue churned into the two shapes queue_scan_test misses
// (issue 11, "Tombstones are still walked"):
//   - empty: N events committed and all delivered;
//   - stuck head: one event failing and retried at the head while N later
//     events are delivered out of order, then a short tail committed.
// Deliveries go as the agent makes them: NextDue, Store::Settle in batches
// of 16, and a Store::Sync after every 256 deliveries.
//
// Invariant: NextDue, ListPending, GetStats, FindPending and (for the empty
// queue) a reopen skip no delete tombstone, however many deliveries left
// them below the head or between live entries. Asserted on what RocksDB
// counts (PerfContext), never on time. A naive scan from key zero shows that
// the tombstones are really there.
//
// N comes from OUTBOX_CHURN_EVENTS; the default is the issue's 200,000, which
// takes ~11 s per test on the shared 2-core machine here.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "lib/store_impl.h"
#include "tests/testing/events.h"
#include "tests/testing/rocks_work.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using testing::CountRocksWork;
using testing::MakeEvent;
using testing::RocksWork;

constexpr size_t kSettleBatch = 16;  // the agent's round, at most
constexpr int kChunk = 256;          // committed, then delivered

int ChurnEvents() {
  const char* v = std::getenv("OUTBOX_CHURN_EVENTS");
  return v != nullptr ? std::atoi(v) : 200000;
}

class ChurnedQueueTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open() {
    Options o;
    o.tables = {"sales"};
    // Commits are not what is measured (Settle is never synced, and Sync()
    // is called as the agent calls it); fsync per commit would only make
    // filling the store slow.
    o.sync = false;
    auto store = Store::Open(o, dir_.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    store_ = std::move(*store);
  }

  void Commit(int n) {
    for (int i = 0; i < n; ++i) {
      Txn txn;
      const std::string id = txn.Emit(MakeEvent(
          "sale.created", "", R"({"sale":)" + std::to_string(i) + "}"));
      txn.Put("sales", "sale-" + id, "x");
      ASSERT_OUTBOX_OK(store_->Commit(txn));
    }
  }

  // Settles `settlements` in batches of kSettleBatch (the agent's rounds),
  // then makes them durable with one Sync (the agent syncs once per
  // ack_sync_interval, not per round).
  void SettleInBatches(const std::vector<Settlement>& settlements) {
    for (size_t i = 0; i < settlements.size(); i += kSettleBatch) {
      const size_t end = std::min(settlements.size(), i + kSettleBatch);
      auto result = store_->Settle(std::vector<Settlement>(
          settlements.begin() + i, settlements.begin() + end));
      ASSERT_OUTBOX_OK(result);
      ASSERT_EQ(result->applied, end - i);
    }
    ASSERT_OUTBOX_OK(store_->Sync());
  }

  static Settlement Delivered(PendingEvent e) {
    Settlement s;
    s.kind = Settlement::Kind::kDelivered;
    s.event = std::move(e);
    return s;
  }

  // Commits and delivers `n` events, kChunk at a time, in NextDue order;
  // with `stuck`, the first event committed fails every time it is tried
  // (due again at once) and stays at the head, and the others of each chunk
  // are delivered in random order.
  void Churn(int n, bool stuck) {
    std::mt19937 gen(11);
    std::string head;
    if (stuck) {
      Commit(1);
      auto due = store_->NextDue(1);
      ASSERT_OUTBOX_OK(due);
      ASSERT_EQ(due->events.size(), 1u);
      head = due->events[0].id;
    }
    for (int done = 0; done < n; done += kChunk) {
      const int chunk = std::min(kChunk, n - done);
      Commit(chunk);
      auto due = store_->NextDue(kChunk + 1);
      ASSERT_OUTBOX_OK(due);
      ASSERT_EQ(due->events.size(), static_cast<size_t>(chunk + stuck));
      std::vector<Settlement> round;
      for (PendingEvent& e : due->events) round.push_back(Delivered(e));
      if (stuck) {
        ASSERT_EQ(round[0].event.id, head);
        round[0].kind = Settlement::Kind::kAttempt;
        round[0].attempt.error = "HTTP 503";
        round[0].attempt.http_status = 503;
        round[0].attempt.next_attempt = absl::Now();
        std::shuffle(round.begin() + 1, round.end(), gen);
      }
      SettleInBatches(round);
    }
  }

  // Reading the first 8 entries from key zero skips tombstones: they are
  // there to be skipped (if compaction had removed them, these tests would
  // show nothing).
  void ExpectNaiveScanSkipsTombstones(const char* shape) {
    auto* impl = static_cast<StoreImpl*>(store_.get());
    const RocksWork naive =
        CountRocksWork([&] { ASSERT_OUTBOX_OK(impl->TEST_ScanFromZero(8)); });
    Print(shape, "naive scan from key 0", naive);
    EXPECT_GT(naive.tombstones_skipped, 0u);
  }

  // Prints what each read did and expects it skipped no tombstone.
  static void ExpectNoTombstonesSkipped(
      const char* shape,
      const std::vector<std::pair<const char*, RocksWork>>& reads) {
    for (const auto& [what, work] : reads) {
      Print(shape, what, work);
      EXPECT_EQ(work.tombstones_skipped, 0u) << shape << ", " << what;
    }
  }

  // NextDue(8) and ListPending(8), each expected to find `expected` events.
  RocksWork CountNextDue(size_t expected) {
    return CountRocksWork([&] {
      auto due = store_->NextDue(8);
      ASSERT_OUTBOX_OK(due);
      EXPECT_EQ(due->events.size(), expected);
    });
  }
  RocksWork CountListPending(size_t expected) {
    return CountRocksWork([&] {
      auto pending = store_->ListPending(8);
      ASSERT_OUTBOX_OK(pending);
      EXPECT_EQ(pending->size(), expected);
    });
  }

  RocksWork Reopen() {
    return CountRocksWork([&] {
      ASSERT_OUTBOX_OK(store_->Close());
      store_.reset();
      Open();
    });
  }

  static void Print(const char* shape, const char* what, const RocksWork& w) {
    std::printf("%s, %d churned: %-22s %s\n", shape, ChurnEvents(), what,
                ::testing::PrintToString(w).c_str());
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(ChurnedQueueTest, EmptyQueueAfterChurnIsReadWithoutSkippingTombstones) {
  const int n = ChurnEvents();
  ASSERT_NO_FATAL_FAILURE(Churn(n, /*stuck=*/false));
  const RocksWork next_due = CountNextDue(0);
  const RocksWork list = CountListPending(0);
  const RocksWork stats = CountRocksWork([&] {
    auto stats = store_->GetStats();
    ASSERT_OUTBOX_OK(stats);
    EXPECT_EQ(stats->pending_events, 0u);
    EXPECT_EQ(stats->delivered_total, static_cast<uint64_t>(n));
  });
  const RocksWork find = CountRocksWork([&] {
    EXPECT_STATUS_CODE(store_->FindPending("no-such-event"),
                       absl::StatusCode::kNotFound);
  });
  ExpectNaiveScanSkipsTombstones("empty queue");
  const RocksWork reopen = Reopen();
  ExpectNoTombstonesSkipped("empty queue", {{"NextDue(8)", next_due},
                                            {"ListPending(8)", list},
                                            {"GetStats", stats},
                                            {"FindPending(missing)", find},
                                            {"reopen", reopen}});
}

TEST_F(ChurnedQueueTest, StuckHeadAfterChurnIsReadWithoutSkippingTombstones) {
  ASSERT_NO_FATAL_FAILURE(Churn(ChurnEvents(), /*stuck=*/true));
  Commit(7);  // a tail beyond the tombstones
  const RocksWork next_due = CountNextDue(8);
  const RocksWork list = CountListPending(8);
  ExpectNaiveScanSkipsTombstones("stuck head");
  ExpectNoTombstonesSkipped(
      "stuck head", {{"NextDue(8)", next_due}, {"ListPending(8)", list}});
}

// Today's figure, not the goal: a reopen rebuilds the queue index by
// iterating the pending column family from the head to the tail
// (StoreImpl::RebuildIndex), so with an event stuck at the head it walks
// every tombstone the deliveries behind it left. If RebuildIndex learns to
// skip them, this becomes 0.
TEST_F(ChurnedQueueTest, StuckHeadReopenWalksEveryTombstoneBehindTheHead) {
  const int n = ChurnEvents();
  ASSERT_NO_FATAL_FAILURE(Churn(n, /*stuck=*/true));
  Commit(7);
  const RocksWork reopen = Reopen();
  Print("stuck head", "reopen", reopen);
  EXPECT_EQ(reopen.tombstones_skipped, static_cast<uint64_t>(n));
  auto pending = store_->ListPending(100);
  ASSERT_OUTBOX_OK(pending);
  ASSERT_EQ(pending->size(), 8u);
  // The head, failed once per chunk, is still there.
  EXPECT_EQ((*pending)[0].attempts,
            static_cast<uint32_t>((n + kChunk - 1) / kChunk));
}

}  // namespace
}  // namespace outbox
