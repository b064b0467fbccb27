// Copyright (c) edge-outbox authors.
//
// Queue scans stay fast after many deliveries.
//
// Invariant: reading the queue costs the same after 200,000 delivered events
// as on a fresh store. NextDue answers from the in-memory schedule with point
// reads; everything that iterates the pending column family (rebuilding that
// schedule at open, ListPending, GetStats) starts at the queue's head (a
// persisted lower bound) and stops at its tail (iterate_upper_bound), so it
// never walks the delete tombstones that deliveries leave below the head.
//
// Asserted on what RocksDB counts (PerfContext::internal_delete_skipped_count),
// never on time. Wall times are printed for the notes: fresh vs. after N
// deliveries, and a naive iteration from key zero as the baseline that shows
// what the bound saves. N comes from OUTBOX_SCAN_DELIVERED (default 200000).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "lib/keys.h"
#include "lib/store_impl.h"
#include "rocksdb/db.h"
#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"
#include "tests/testing/events.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using testing::MakeEvent;

constexpr int kPendingTail = 100;  // events left pending behind the head
constexpr int kScans = 2000;       // NextDue calls per measurement

struct ScanFigures {
  double micros_per_scan = 0;
  uint64_t tombstones_skipped = 0;  // over all scans
};

int DeliveredFromEnv() {
  const char* v = std::getenv("OUTBOX_SCAN_DELIVERED");
  return v != nullptr ? std::atoi(v) : 200000;
}

std::unique_ptr<Store> OpenFast(const std::string& path) {
  Options o;
  o.tables = {"sales"};
  // Only the scan is measured here; fsync per commit would make filling the
  // store take minutes without changing what a scan meets.
  o.sync = false;
  auto store = Store::Open(o, path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

void CommitEvents(Store* store, int n) {
  for (int i = 0; i < n; ++i) {
    Txn txn;
    txn.Put("sales", "sale-" + std::to_string(i), "x");
    txn.Emit(MakeEvent("sale.created", "till-" + std::to_string(i % 4),
                       R"({"sale":")" + std::to_string(i) + R"("})"));
    ASSERT_OUTBOX_OK(store->Commit(txn));
  }
}

void DeliverAll(Store* store, int n) {
  int delivered = 0;
  while (delivered < n) {
    auto due = store->NextDue(64);
    ASSERT_OUTBOX_OK(due);
    ASSERT_FALSE(due->events.empty());
    for (const PendingEvent& e : due->events) {
      ASSERT_OUTBOX_OK(store->MarkDelivered(e));
      ++delivered;
    }
  }
}

// Runs `scan` kScans times and returns the time and tombstones per run.
template <typename Scan>
ScanFigures Measure(Scan scan, int runs = kScans) {
  ScanFigures f;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) scan();
  const auto end = std::chrono::steady_clock::now();
  f.tombstones_skipped =
      rocksdb::get_perf_context()->internal_delete_skipped_count / runs;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  f.micros_per_scan =
      std::chrono::duration<double, std::micro>(end - start).count() / runs;
  return f;
}

struct StoreFigures {
  ScanFigures next_due, list_pending, reopen;
};

StoreFigures MeasureStore(std::unique_ptr<Store>* store,
                          const std::string& path) {
  StoreFigures f;
  f.next_due = Measure([&] {
    auto due = (*store)->NextDue(8);
    EXPECT_TRUE(due.ok() && due->events.size() == 4)
        << "expected the 4 ordering-key heads";
  });
  f.list_pending = Measure([&] {
    auto pending = (*store)->ListPending(8);
    EXPECT_TRUE(pending.ok() && pending->size() == 8);
  });
  f.reopen = Measure(
      [&] {
        store->reset();
        *store = OpenFast(path);
      },
      20);
  return f;
}

void Print(const char* what, const ScanFigures& fresh, const ScanFigures& used,
           int delivered) {
  std::printf(
      "  %-22s fresh %9.1f us, %llu tombstones | after %d delivered %9.1f "
      "us, %llu tombstones | ratio %.2f\n",
      what, fresh.micros_per_scan,
      static_cast<unsigned long long>(fresh.tombstones_skipped), delivered,
      used.micros_per_scan,
      static_cast<unsigned long long>(used.tombstones_skipped),
      used.micros_per_scan / fresh.micros_per_scan);
}

TEST(QueueScanTest, ReadsAfterManyDeliveriesSkipNoTombstones) {
  const int delivered = DeliveredFromEnv();
  testing::TempDir dir;

  auto fresh = OpenFast(dir.Sub("fresh"));
  ASSERT_NE(fresh, nullptr);
  CommitEvents(fresh.get(), kPendingTail);
  const StoreFigures f = MeasureStore(&fresh, dir.Sub("fresh"));

  auto used = OpenFast(dir.Sub("used"));
  ASSERT_NE(used, nullptr);
  const auto fill_start = std::chrono::steady_clock::now();
  CommitEvents(used.get(), delivered);
  DeliverAll(used.get(), delivered);
  const double fill_seconds = std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - fill_start)
                                  .count();
  CommitEvents(used.get(), kPendingTail);
  // The baseline first, before a reopen flushes anything: the same first
  // entries read by iterating from key zero without bounds.
  auto* impl = static_cast<StoreImpl*>(used.get());
  const ScanFigures naive = Measure(
      [&] {
        auto n = impl->TEST_ScanFromZero(8);
        EXPECT_TRUE(n.ok() && *n == 8);
      },
      20);
  const StoreFigures u = MeasureStore(&used, dir.Sub("used"));

  std::printf(
      "queue reads with %d events pending (%d commits + deliveries "
      "took %.1f s, sync=false):\n",
      kPendingTail, delivered, fill_seconds);
  Print("NextDue(8)", f.next_due, u.next_due, delivered);
  Print("ListPending(8)", f.list_pending, u.list_pending, delivered);
  Print("reopen (index rebuild)", f.reopen, u.reopen, delivered);
  std::printf("  naive iteration from key 0: %.1f us, %llu tombstones\n",
              naive.micros_per_scan,
              static_cast<unsigned long long>(naive.tombstones_skipped));

  EXPECT_EQ(u.next_due.tombstones_skipped, 0u);
  EXPECT_EQ(u.list_pending.tombstones_skipped, 0u);
  EXPECT_EQ(u.reopen.tombstones_skipped, 0u);
  // The baseline proves the store really holds the tombstones the bound
  // avoids (if compaction had removed them all, this test would show nothing).
  EXPECT_GT(naive.tombstones_skipped, 0u);
}

}  // namespace
}  // namespace outbox
