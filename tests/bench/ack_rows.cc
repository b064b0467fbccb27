// Copyright (c) edge-outbox authors.
//
// Acknowledgements: taking due events and settling them delivered, as the
// agent does with each round's 2xx answers, against seed 000's sender
// (SELECT the oldest unsent row, UPDATE its sent_at, synchronous=FULL), and
// the bytes each writes per event. The agent syncs its acknowledgements at
// most ack_sync_interval (1 s) after writing them; a second row syncs after
// every batch. All are measured in rounds (bench_rounds.h), so that they
// meet the same disk.

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_rounds.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/sqlite_outbox.h"

namespace outbox::bench {
namespace {

constexpr int kRounds = 50;
// Events taken per NextDue: the agent's default max_in_flight.
constexpr size_t kTakeLimit = 8;
// The agent's default ack_sync_interval.
constexpr absl::Duration kSyncInterval = absl::Seconds(1);

// Acknowledges `count` due events of `store` and leaves them durable,
// syncing every `sync_every` (ZeroDuration: after each batch); each event's
// latency is its round's time (NextDue + its settle [+ sync]) divided by the
// round's events.
absl::StatusOr<Throughput> AckSlice(Store& store, int count,
                                    absl::Duration sync_every) {
  Throughput t;
  Stopwatch since_sync;
  while (t.ops < count) {
    Stopwatch round;
    const size_t want = std::min<size_t>(kTakeLimit, count - t.ops);
    OUTBOX_ASSIGN_OR_RETURN(std::vector<PendingEvent> due,
                            TakeDue(store, want));
    if (due.empty()) return absl::InternalError("ack row: nothing due");
    OUTBOX_RETURN_IF_ERROR(Ack(store, due));
    const bool last = t.ops + static_cast<int64_t>(due.size()) >= count;
    if (last || since_sync.Elapsed() >= sync_every) {
      OUTBOX_RETURN_IF_ERROR(SyncAcks(store));
      since_sync = Stopwatch();
    }
    const absl::Duration took = round.Elapsed();
    for (size_t i = 0; i < due.size(); ++i) t.latencies.Add(took / due.size());
    t.elapsed += took;
    t.ops += static_cast<int64_t>(due.size());
  }
  return t;
}

absl::StatusOr<Throughput> SqliteAckSlice(SqliteOutbox& db, int count) {
  Throughput t;
  for (int i = 0; i < count; ++i) {
    Stopwatch one;
    OUTBOX_ASSIGN_OR_RETURN(bool acked, db.AckOldest());
    if (!acked) return absl::InternalError("sqlite ack row: nothing unsent");
    t.latencies.Add(one.Elapsed());
    t.elapsed += one.Elapsed();
    ++t.ops;
  }
  return t;
}

// A SQLite outbox at `dir` with `n` unsent rows, opened with
// synchronous=FULL (filled with it OFF: only the rows matter).
absl::StatusOr<std::unique_ptr<SqliteOutbox>> FilledSqlite(
    const std::string& dir, int n) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/outbox.sqlite3";
  {
    OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<SqliteOutbox> fill,
                            SqliteOutbox::Open(path, /*sync=*/false));
    for (int i = 0; i < n; ++i) OUTBOX_RETURN_IF_ERROR(fill->CommitOrder(0, i));
  }
  return SqliteOutbox::Open(path);
}

std::string AckDetail(Subject& s) {
  return absl::StrFormat("per event: p50 %s us, p99 %s us",
                         FormatFigure(s.total.latencies.Percentile(50)),
                         FormatFigure(s.total.latencies.Percentile(99)));
}

void AddRows(Subject& store, Subject& each, Subject& sqlite,
             int64_t store_flush, int64_t sqlite_flush, Table* table) {
  auto per_event = [](const Subject& s, int64_t bytes) {
    return static_cast<double>(bytes) / s.total.ops;
  };
  table->Add(Row{"ack",
                 absl::StrCat("ack: NextDue(", kTakeLimit,
                              ") + Settle, synced every 1 s (the agent)"),
                 store.total.per_second(),
                 "/s",
                 AckDetail(store),
                 {Vs("sqlite.ack")}});
  table->Add(Row{
      "ack.each",
      absl::StrCat("ack: NextDue(", kTakeLimit, ") + Settle + Sync per batch"),
      each.total.per_second(),
      "/s",
      AckDetail(each),
      {Vs("sqlite.ack")}});
  table->Add(Row{"sqlite.ack",
                 "ack: SQLite SELECT oldest unsent + UPDATE",
                 sqlite.total.per_second(),
                 "/s",
                 AckDetail(sqlite),
                 {}});
  table->Add(Row{"bytes.ack",
                 "bytes written per acknowledged event",
                 per_event(store, store.written),
                 "B",
                 absl::StrCat("+", FormatFigure(per_event(store, store_flush)),
                              " B at the flush (reopen)"),
                 {Vs("bytes.sqlite_ack")}});
  table->Add(
      Row{"bytes.sqlite_ack",
          "bytes written per acknowledged event, SQLite",
          per_event(sqlite, sqlite.written),
          "B",
          absl::StrCat("+", FormatFigure(per_event(sqlite, sqlite_flush)),
                       " B at the checkpoint on close"),
          {}});
}

}  // namespace

absl::Status RunAckRows(const Scale& scale, const std::string& dir,
                        Table* table) {
  const int n = scale.commits;
  const std::string path = dir + "/ack";
  OUTBOX_RETURN_IF_ERROR(FillStore(path, n));
  OUTBOX_RETURN_IF_ERROR(FillStore(path + "-each", n));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/true));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> each_store,
                          OpenBenchStore(path + "-each", /*sync=*/true));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<SqliteOutbox> db,
                          FilledSqlite(dir + "/sqlite-ack", n));
  Store* s = store.get();
  Store* e = each_store.get();
  SqliteOutbox* d = db.get();
  Subject acks(
      [s](int64_t, int count) { return AckSlice(*s, count, kSyncInterval); });
  Subject each([e](int64_t, int count) {
    return AckSlice(*e, count, absl::ZeroDuration());
  });
  Subject sqlite_acks(
      [d](int64_t, int count) { return SqliteAckSlice(*d, count); });
  OUTBOX_RETURN_IF_ERROR(RunRounds(kRounds, n, {&acks, &each, &sqlite_acks}));

  OUTBOX_RETURN_IF_ERROR(ExpectPending(*store, n - acks.total.ops, "ack row"));
  OUTBOX_RETURN_IF_ERROR(
      ExpectPending(*each_store, n - each.total.ops, "ack row (each)"));
  each_store.reset();
  OUTBOX_ASSIGN_OR_RETURN(int64_t unsent, db->CountUnsent());
  if (unsent != n - sqlite_acks.total.ops) {
    return absl::InternalError(absl::StrCat("sqlite ack row: ", unsent,
                                            " rows unsent, expected ",
                                            n - sqlite_acks.total.ops));
  }
  // As for commits, the deletions are flushed at the reopen.
  OUTBOX_ASSIGN_OR_RETURN(int64_t store_flush,
                          FlushBytes(std::move(store), path));
  const int64_t before = WriteBytes();
  db.reset();  // closing checkpoints the WAL into the database
  const int64_t sqlite_flush = WriteBytes() - before;
  AddRows(acks, each, sqlite_acks, store_flush, sqlite_flush, table);
  return absl::OkStatus();
}

}  // namespace outbox::bench
