// Copyright (c) edge-outbox authors.
//
// Acknowledgements: taking due events and marking them delivered, as the
// agent does after each 2xx, against seed 000's sender (SELECT the oldest
// unsent row, UPDATE its sent_at), and the bytes each writes per event. Both
// are measured in rounds (bench_rounds.h), so that they meet the same disk.

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/status_macros.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_rounds.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/sqlite_outbox.h"

namespace outbox::bench {
namespace {

constexpr int kRounds = 50;
// Events taken per NextDue: the agent's default max_in_flight.
constexpr size_t kTakeLimit = 8;

// Acknowledges `count` due events of `store`; each event's latency is its
// round's time (NextDue + its acks) divided by the round's events.
absl::StatusOr<Throughput> AckSlice(Store& store, int count) {
  Throughput t;
  while (t.ops < count) {
    Stopwatch round;
    const size_t want = std::min<size_t>(kTakeLimit, count - t.ops);
    OUTBOX_ASSIGN_OR_RETURN(std::vector<PendingEvent> due,
                            TakeDue(store, want));
    if (due.empty()) return absl::InternalError("ack row: nothing due");
    OUTBOX_RETURN_IF_ERROR(Ack(store, due));
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

void AddRows(Subject& store, Subject& sqlite, int64_t store_flush,
             int64_t sqlite_flush, Table* table) {
  auto per_event = [](const Subject& s, int64_t bytes) {
    return static_cast<double>(bytes) / s.total.ops;
  };
  table->Add(Row{
      "ack",
      absl::StrCat("ack: NextDue(", kTakeLimit, ") + MarkDelivered per event"),
      store.total.per_second(),
      "/s",
      AckDetail(store),
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
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/true));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<SqliteOutbox> db,
                          FilledSqlite(dir + "/sqlite-ack", n));
  Store* s = store.get();
  SqliteOutbox* d = db.get();
  Subject acks([s](int64_t, int count) { return AckSlice(*s, count); });
  Subject sqlite_acks(
      [d](int64_t, int count) { return SqliteAckSlice(*d, count); });
  OUTBOX_RETURN_IF_ERROR(RunRounds(kRounds, n, {&acks, &sqlite_acks}));

  OUTBOX_RETURN_IF_ERROR(ExpectPending(*store, n - acks.total.ops, "ack row"));
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
  AddRows(acks, sqlite_acks, store_flush, sqlite_flush, table);
  return absl::OkStatus();
}

}  // namespace outbox::bench
