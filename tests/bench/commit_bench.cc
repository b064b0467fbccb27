// Copyright (c) edge-outbox authors.
//
// Commit throughput and latency, against a baseline measured in the same
// process: a raw RocksDB WriteBatch with the same record and a same-sized
// value, written the same way (sync or not). The ratio is the cost of the
// outbox layer (entry encoding, idempotency record, queue counters, index).
// Prints figures; never passes or fails on them. Label: bench.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "rocksdb/db.h"
#include "tests/testing/events.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

struct Figures {
  double per_second = 0;
  double p50_us = 0, p99_us = 0;
};

template <typename Write>
Figures Time(int n, Write write) {
  std::vector<double> us;
  us.reserve(n);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    write(i);
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::sort(us.begin(), us.end());
  return Figures{n / seconds, us[n / 2], us[n * 99 / 100]};
}

void CompareWithRawRocksDb(bool sync, int n) {
  testing::TempDir dir;
  const std::string record(200, 'r');
  const std::string payload(300, 'p');

  Options options;
  options.tables = {"sales"};
  options.sync = sync;
  auto store = Store::Open(options, dir.Sub("outbox"));
  ASSERT_TRUE(store.ok()) << store.status();
  const Figures outbox = Time(n, [&](int i) {
    Txn txn;
    txn.Put("sales", absl::StrCat("sale-", i), record);
    txn.Emit(testing::MakeEvent("sale.created", "till-1", payload));
    txn.SetIdempotencyKey(absl::StrCat("receipt-", i));
    auto result = (*store)->Commit(txn);
    ASSERT_TRUE(result.ok()) << result.status();
  });

  rocksdb::Options raw_options;
  raw_options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(raw_options, dir.Sub("raw"), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions wo;
  wo.sync = sync;
  const Figures baseline = Time(n, [&](int i) {
    rocksdb::WriteBatch batch;
    ASSERT_TRUE(batch.Put(absl::StrCat("sale-", i), record).ok());
    ASSERT_TRUE(batch.Put(absl::StrCat("event-", i), payload).ok());
    ASSERT_TRUE(db->Write(wo, &batch).ok());
  });

  std::printf(
      "%s, %d commits of a 200 B record + 300 B event (+ idempotency key):\n"
      "  outbox Commit:         %8.0f /s  p50 %7.1f us  p99 %7.1f us\n"
      "  raw RocksDB batch:     %8.0f /s  p50 %7.1f us  p99 %7.1f us\n"
      "  outbox / raw throughput ratio: %.2f\n",
      sync ? "sync=true (fsync per commit)" : "sync=false", n,
      outbox.per_second, outbox.p50_us, outbox.p99_us, baseline.per_second,
      baseline.p50_us, baseline.p99_us,
      outbox.per_second / baseline.per_second);
}

TEST(CommitBench, SyncedCommits) { CompareWithRawRocksDb(/*sync=*/true, 2000); }

// Synced commits from 8 threads at once (group commit), for profiling; the
// side-by-side figures are outbox_bench's.
TEST(CommitBench, EightProducers) {
  testing::TempDir dir;
  Options options;
  options.tables = {"sales"};
  auto store = Store::Open(options, dir.Sub("outbox"));
  ASSERT_TRUE(store.ok()) << store.status();
  constexpr int kThreads = 8, kEach = 2000;
  const std::string record(200, 'r');
  const std::string payload(300, 'p');
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Txn txn;
        txn.Put("sales", absl::StrCat("sale-", t, "-", i), record);
        txn.Emit(testing::MakeEvent("sale.created", "", payload));
        txn.SetIdempotencyKey(absl::StrCat("receipt-", t, "-", i));
        ASSERT_TRUE((*store)->Commit(txn).ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("8 producers, %d synced commits: %.0f /s\n", kThreads * kEach,
              kThreads * kEach / seconds);
}
TEST(CommitBench, UnsyncedCommits) {
  CompareWithRawRocksDb(/*sync=*/false, 50000);
}

}  // namespace
}  // namespace outbox
