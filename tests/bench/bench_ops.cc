// Copyright (c) edge-outbox authors.

#include "tests/bench/bench_ops.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"
#include "tests/bench/bench_env.h"

namespace outbox::bench {

Options BenchOptions(bool sync, Options::MemoryProfile profile) {
  Options options;
  options.tables = {"sales"};
  options.sync = sync;
  options.memory_profile = profile;
  options.max_pending_events = uint64_t{1} << 32;
  options.max_pending_bytes = uint64_t{1} << 40;
  return options;
}

absl::StatusOr<std::unique_ptr<Store>> OpenBenchStore(
    const std::string& path, bool sync, Options::MemoryProfile profile) {
  return Store::Open(BenchOptions(sync, profile), path);
}

std::string SalePayload(int producer, int64_t i) {
  std::string payload =
      absl::StrCat(R"({"sale":"sale-)", producer, "-", i, R"(","pad":")");
  payload.resize(kPayloadBytes - 2, 'p');
  payload += "\"}";
  return payload;
}

absl::Status CommitSale(Store& store, int producer, int64_t i,
                        const std::string& ordering_key) {
  static const std::string kRecord(kRecordBytes, 'r');
  Txn txn;
  txn.Put("sales", absl::StrCat("sale-", producer, "-", i), kRecord);
  Event event;
  event.type = "sale.created";
  event.ordering_key = ordering_key;
  event.payload = SalePayload(producer, i);
  txn.Emit(std::move(event));
  txn.SetIdempotencyKey(absl::StrCat("receipt-", producer, "-", i));
  return store.Commit(txn).status();
}

absl::StatusOr<std::vector<PendingEvent>> TakeDue(Store& store, size_t limit) {
  OUTBOX_ASSIGN_OR_RETURN(DueEvents due, store.NextDue(limit));
  return std::move(due.events);
}

absl::Status Ack(Store& store, absl::Span<const PendingEvent> events) {
  std::vector<Settlement> settled;
  for (const PendingEvent& event : events) {
    Settlement s;
    s.kind = Settlement::Kind::kDelivered;
    s.event = event;
    settled.push_back(std::move(s));
  }
  OUTBOX_ASSIGN_OR_RETURN(const SettleResult result, store.Settle(settled));
  if (result.applied != events.size()) {
    return absl::InternalError(absl::StrCat("settled ", result.applied, " of ",
                                            events.size(), " events"));
  }
  return absl::OkStatus();
}

absl::Status SyncAcks(Store& store) { return store.Sync(); }

absl::Status Retry(Store& store, const PendingEvent& event, absl::Time when) {
  return store.RecordAttempt(event, AttemptRecord{"bench: held", 503, when});
}

absl::StatusOr<std::vector<PendingEvent>> ListHead(Store& store, size_t limit) {
  return store.ListPending(limit);
}

absl::Status ExpectPending(Store& store, uint64_t n, const std::string& what) {
  OUTBOX_ASSIGN_OR_RETURN(Stats stats, store.GetStats());
  if (stats.pending_events != n) {
    return absl::InternalError(absl::StrCat(what, ": ", stats.pending_events,
                                            " events pending, expected ", n));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> FlushBytes(std::unique_ptr<Store> store,
                                   const std::string& path) {
  const int64_t before = WriteBytes();
  OUTBOX_RETURN_IF_ERROR(store->Close());
  store.reset();
  OUTBOX_ASSIGN_OR_RETURN(store, OpenBenchStore(path, /*sync=*/true));
  const int64_t written = WriteBytes() - before;
  OUTBOX_RETURN_IF_ERROR(store->Close());
  return written;
}

void StartCountingSkips() {
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
}

Skipped CountedSkips() {
  const rocksdb::PerfContext* perf = rocksdb::get_perf_context();
  return Skipped{perf->internal_delete_skipped_count,
                 perf->internal_key_skipped_count};
}

absl::Status CommitSales(Store& store, int producer, int64_t first, int64_t n,
                         int keys) {
  for (int64_t i = first; i < first + n; ++i) {
    const std::string key = keys > 0 ? absl::StrCat("till-", i % keys) : "";
    OUTBOX_RETURN_IF_ERROR(CommitSale(store, producer, i, key));
  }
  return absl::OkStatus();
}

absl::Status FillStore(const std::string& path, int64_t n, int keys) {
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/false));
  OUTBOX_RETURN_IF_ERROR(CommitSales(*store, 0, 0, n, keys));
  return store->Close();
}

absl::StatusOr<std::string> PendingStore(const std::string& dir, int64_t n) {
  const std::string path = absl::StrCat(dir, "/pending-", n);
  if (std::filesystem::exists(path + "/CURRENT")) return path;
  OUTBOX_RETURN_IF_ERROR(FillStore(path, n));
  return path;
}

}  // namespace outbox::bench
