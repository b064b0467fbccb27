// Copyright (c) edge-outbox authors.
//
// Acknowledgements: taking due events and marking them delivered, as the
// agent does after each 2xx, against seed 000's sender (SELECT the oldest
// unsent row, UPDATE its sent_at), and the bytes each writes per event.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/status_macros.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/sqlite_outbox.h"

namespace outbox::bench {
namespace {

// Events taken per NextDue: the agent's default max_in_flight.
constexpr size_t kTakeLimit = 8;

struct AckFigures {
  double per_second = 0;
  Latencies per_event;         // an iteration's time / its events
  double written_per_ack = 0;  // /proc/self/io write_bytes
  double flush_per_ack = 0;    // the later flush/checkpoint
};

absl::StatusOr<AckFigures> MeasureStoreAcks(const std::string& path, int n) {
  OUTBOX_RETURN_IF_ERROR(FillStore(path, n));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/true));
  AckFigures f;
  const int64_t before = WriteBytes();
  Stopwatch wall;
  for (int acked = 0; acked < n;) {
    Stopwatch round;
    OUTBOX_ASSIGN_OR_RETURN(std::vector<PendingEvent> due,
                            TakeDue(*store, kTakeLimit));
    if (due.empty()) {
      return absl::InternalError(
          absl::StrCat("ack row: nothing due after ", acked, " of ", n));
    }
    OUTBOX_RETURN_IF_ERROR(Ack(*store, due));
    const absl::Duration each = round.Elapsed() / due.size();
    for (size_t i = 0; i < due.size(); ++i) f.per_event.Add(each);
    acked += static_cast<int>(due.size());
  }
  f.per_second = n / absl::ToDoubleSeconds(wall.Elapsed());
  const int64_t after = WriteBytes();
  OUTBOX_RETURN_IF_ERROR(ExpectPending(*store, 0, "ack row"));
  f.written_per_ack = static_cast<double>(after - before) / n;
  // As for commits: the open after a close writes the memtable (here the
  // deletions) to a table file.
  OUTBOX_RETURN_IF_ERROR(store->Close());
  store.reset();
  OUTBOX_ASSIGN_OR_RETURN(store, OpenBenchStore(path, /*sync=*/true));
  f.flush_per_ack = static_cast<double>(WriteBytes() - after) / n;
  OUTBOX_RETURN_IF_ERROR(store->Close());
  return f;
}

absl::StatusOr<AckFigures> MeasureSqliteAcks(const std::string& dir, int n) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/outbox.sqlite3";
  {
    OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<SqliteOutbox> fill,
                            SqliteOutbox::Open(path, /*sync=*/false));
    for (int i = 0; i < n; ++i) OUTBOX_RETURN_IF_ERROR(fill->CommitOrder(0, i));
  }
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<SqliteOutbox> db,
                          SqliteOutbox::Open(path));
  AckFigures f;
  const int64_t before = WriteBytes();
  Stopwatch wall;
  for (int i = 0; i < n; ++i) {
    Stopwatch one;
    OUTBOX_ASSIGN_OR_RETURN(bool acked, db->AckOldest());
    if (!acked) return absl::InternalError("sqlite ack row: nothing unsent");
    f.per_event.Add(one.Elapsed());
  }
  f.per_second = n / absl::ToDoubleSeconds(wall.Elapsed());
  const int64_t after = WriteBytes();
  OUTBOX_ASSIGN_OR_RETURN(bool more, db->AckOldest());
  if (more) return absl::InternalError("sqlite ack row: rows left unsent");
  f.written_per_ack = static_cast<double>(after - before) / n;
  db.reset();  // closing checkpoints the WAL into the database
  f.flush_per_ack = static_cast<double>(WriteBytes() - after) / n;
  return f;
}

std::string AckDetail(AckFigures& f) {
  return absl::StrFormat("per event: p50 %s us, p99 %s us",
                         FormatFigure(f.per_event.Percentile(50)),
                         FormatFigure(f.per_event.Percentile(99)));
}

std::string FlushDetail(const AckFigures& f) {
  return absl::StrCat("+", FormatFigure(f.flush_per_ack),
                      " B at flush/checkpoint");
}

}  // namespace

absl::Status RunAckRows(const Scale& scale, const std::string& dir,
                        Table* table) {
  OUTBOX_ASSIGN_OR_RETURN(AckFigures store,
                          MeasureStoreAcks(dir + "/ack", scale.commits));
  OUTBOX_ASSIGN_OR_RETURN(
      AckFigures sqlite, MeasureSqliteAcks(dir + "/sqlite-ack", scale.commits));
  table->Add(Row{
      "ack",
      absl::StrCat("ack: NextDue(", kTakeLimit, ") + MarkDelivered per event"),
      store.per_second,
      "/s",
      AckDetail(store),
      {Vs("sqlite.ack")}});
  table->Add(Row{"sqlite.ack",
                 "ack: SQLite SELECT oldest unsent + UPDATE",
                 sqlite.per_second,
                 "/s",
                 AckDetail(sqlite),
                 {}});
  table->Add(Row{"bytes.ack",
                 "bytes written per acknowledged event",
                 store.written_per_ack,
                 "B",
                 FlushDetail(store),
                 {Vs("bytes.sqlite_ack")}});
  table->Add(Row{"bytes.sqlite_ack",
                 "bytes written per acknowledged event, SQLite",
                 sqlite.written_per_ack,
                 "B",
                 FlushDetail(sqlite),
                 {}});
  return absl::OkStatus();
}

}  // namespace outbox::bench
