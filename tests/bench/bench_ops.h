// Copyright (c) edge-outbox authors.
//
// The store operations outbox_bench measures, one small function each, as
// the agent calls them: Settle for a round's acknowledgements (unsynced) and
// Sync to make them durable.

#ifndef OUTBOX_TESTS_BENCH_BENCH_OPS_H_
#define OUTBOX_TESTS_BENCH_BENCH_OPS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "outbox/options.h"
#include "outbox/store.h"

namespace outbox::bench {

// The sizes every row writes, as tests/bench/commit_bench.cc does.
inline constexpr size_t kRecordBytes = 200;
inline constexpr size_t kPayloadBytes = 300;

// Options of every benchmark store: table "sales", and queue limits raised
// so that a backlog of 1,000,000 of these events fits (the default
// max_pending_bytes, 256 MiB, holds about 650,000 of them).
Options BenchOptions(bool sync, Options::MemoryProfile profile =
                                    Options::MemoryProfile::kDefault);
absl::StatusOr<std::unique_ptr<Store>> OpenBenchStore(
    const std::string& path, bool sync,
    Options::MemoryProfile profile = Options::MemoryProfile::kDefault);

// The event body: 300 bytes of JSON naming sale `i` of `producer`.
std::string SalePayload(int producer, int64_t i);

// One sale: a 200 B record, a 300 B event (type "sale.created", routed to
// the sink) and an idempotency key unique per (producer, i).
absl::Status CommitSale(Store& store, int producer, int64_t i,
                        const std::string& ordering_key = "");

// Up to `limit` events that are due now (NextDue).
absl::StatusOr<std::vector<PendingEvent>> TakeDue(Store& store, size_t limit);

// Acknowledges delivered events in one Settle: one write, not synced.
absl::Status Ack(Store& store, absl::Span<const PendingEvent> events);

// Makes every acknowledgement so far durable (Store::Sync).
absl::Status SyncAcks(Store& store);

// Records a failed attempt of `event`, due again at `when` (RecordAttempt).
absl::Status Retry(Store& store, const PendingEvent& event, absl::Time when);

// The first `limit` pending events (ListPending), as outboxctl lists them.
absl::StatusOr<std::vector<PendingEvent>> ListHead(Store& store, size_t limit);

// kInternal unless `store` holds exactly `n` pending events: each row checks
// that what it timed did its work. `what` names the row in the error.
absl::Status ExpectPending(Store& store, uint64_t n, const std::string& what);

// Closes `store` (opened at `path`), opens it again and closes it; returns
// the bytes written meanwhile. RocksDB keeps recent writes in its memtable,
// and the open replays the log and writes them to a table file: the flush a
// longer run would have paid for those writes anyway.
absl::StatusOr<int64_t> FlushBytes(std::unique_ptr<Store> store,
                                   const std::string& path);

// What RocksDB skipped on the calling thread (rocksdb::PerfContext) since
// StartCountingSkips(): deletion tombstones, and keys of any kind.
struct Skipped {
  uint64_t tombstones = 0;  // internal_delete_skipped_count
  uint64_t keys = 0;        // internal_key_skipped_count
};
void StartCountingSkips();
Skipped CountedSkips();

// Commits `n` sales (producer `producer`, numbered from `first`) over
// `keys` ordering keys (0: none) into `store`.
absl::Status CommitSales(Store& store, int producer, int64_t first, int64_t n,
                         int keys = 0);

// Opens the store at `path` without fsync (only the shape of what is left
// matters), commits `n` sales over `keys` ordering keys and closes it.
absl::Status FillStore(const std::string& path, int64_t n, int keys = 0);

// A store under `dir` holding `n` pending sales without ordering keys,
// filled (and closed) on first use. Returns its path.
absl::StatusOr<std::string> PendingStore(const std::string& dir, int64_t n);

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_BENCH_OPS_H_
