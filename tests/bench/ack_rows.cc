// Copyright (c) edge-outbox authors.
//
// Acknowledgements: taking the due events and marking them delivered, as the
// agent does with each round's 2xx answers, against seed 000's SQLite outbox
// doing the same under the same contract, and the bytes each side writes per
// event. Each ratio compares one contract on both sides:
//   - lazy: up to 8 events per write (NextDue + Settle; one SQLite
//     transaction that SELECTs the oldest unsent rows and UPDATEs them, WAL
//     with synchronous=NORMAL), made durable every 1 s, as the agent's
//     ack_sync_interval does, and after each slice (bench_rounds.h), so that
//     every slice pays for its own durability. Ours syncs with Store::Sync,
//     SQLite's with an fdatasync of its WAL: a power cut may undo the last
//     second, never half a write.
//   - durable per batch: the same writes, each synced before the next batch
//     (Settle + Sync; synchronous=FULL, whose COMMIT fsyncs the WAL).
// Seed 000's own sender, one row per synced transaction, stays as a
// reference without a ratio: none of our rows has its contract.
// Bytes per event are counted the same way on both sides: write_bytes during
// the rounds, from a page cache the preparation left clean (SyncFiles), plus
// what the rounds left to write at the end (RocksDB's flush at the reopen,
// SQLite's checkpoint at the close). All run in rounds, so that they meet
// the same disk.

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_rounds.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/sqlite_outbox.h"

namespace outbox::bench {
namespace {

constexpr int kRounds = 50;
// Events taken per batch: the agent's default max_in_flight.
constexpr int kTakeLimit = 8;
// The agent's default ack_sync_interval.
constexpr absl::Duration kSyncInterval = absl::Seconds(1);

// One side of an ack row, as AckSlice drives it.
struct AckOps {
  // Takes up to `limit` due events and marks them delivered in one write;
  // returns how many (0: nothing was due).
  std::function<absl::StatusOr<int>(int limit)> take_and_ack;
  // Makes every acknowledgement so far durable. Empty when each write
  // already is.
  std::function<absl::Status()> sync;
};

// Acknowledges `count` events in writes of up to `batch`, syncing once
// `sync_every` has passed since the slice's last sync, and after its last
// write (ZeroDuration: after every write). Both sides of a row run this
// loop, so that they sync at the same moments. Each event's latency is its
// write's time (take + mark [+ sync]) divided by the write's events.
absl::StatusOr<Throughput> AckSlice(const AckOps& ops, int count, int batch,
                                    absl::Duration sync_every) {
  Throughput t;
  Stopwatch since_sync;
  while (t.ops < count) {
    Stopwatch write;
    OUTBOX_ASSIGN_OR_RETURN(const int acked,
                            ops.take_and_ack(static_cast<int>(
                                std::min<int64_t>(batch, count - t.ops))));
    if (acked == 0) return absl::InternalError("ack row: nothing due");
    const bool last = t.ops + acked >= count;
    if (ops.sync && (last || since_sync.Elapsed() >= sync_every)) {
      OUTBOX_RETURN_IF_ERROR(ops.sync());
      since_sync = Stopwatch();
    }
    const absl::Duration took = write.Elapsed();
    for (int i = 0; i < acked; ++i) t.latencies.Add(took / acked);
    t.elapsed += took;
    t.ops += acked;
  }
  return t;
}

// What one side of one contract is, for its rows.
struct SideName {
  std::string key;       // the rate's figure ("bytes.<key>": the bytes'),
                         // and the side's directory
  std::string vs;        // the other side's key, for the ratios; "": none
  std::string contract;  // "ack, lazy (...)": the same on both sides
  std::string who;       // "edge-outbox", "SQLite"
  std::string how;       // how this side keeps the contract
};

// One side: its store or its SQLite database, and what it measured.
struct AckSide {
  SideName name;
  std::string path;
  std::unique_ptr<Store> store;      // ours, or
  std::unique_ptr<SqliteOutbox> db;  // SQLite's
  Subject subject;
  // Bytes written after the rounds for the rounds' writes, and when:
  // RocksDB's flush at the reopen, SQLite's checkpoint at the close.
  int64_t deferred = 0;
  std::string deferred_at;
};

// Our side, in `dir`/<key>: a store with `n` pending events, acknowledged in
// NextDue(8) + Settle writes and synced as `sync_every` says.
absl::Status PrepareStore(int n, const std::string& dir,
                          absl::Duration sync_every, AckSide* side) {
  side->path = absl::StrCat(dir, "/", side->name.key);
  OUTBOX_RETURN_IF_ERROR(FillStore(side->path, n));
  OUTBOX_ASSIGN_OR_RETURN(side->store,
                          OpenBenchStore(side->path, /*sync=*/true));
  Store* store = side->store.get();
  AckOps ops;
  ops.take_and_ack = [store](int limit) -> absl::StatusOr<int> {
    OUTBOX_ASSIGN_OR_RETURN(std::vector<PendingEvent> due,
                            TakeDue(*store, limit));
    if (!due.empty()) OUTBOX_RETURN_IF_ERROR(Ack(*store, due));
    return static_cast<int>(due.size());
  };
  ops.sync = [store] { return SyncAcks(*store); };
  side->subject = Subject([ops, sync_every](int64_t, int count) {
    return AckSlice(ops, count, kTakeLimit, sync_every);
  });
  return SyncFiles(side->path);  // the fill was not synced
}

// SQLite's side, in `dir`/<key>: a database with `n` unsent rows (filled with
// synchronous=OFF: only the rows matter), opened with `synchronous`, whose
// sender takes `batch` rows per transaction. Under kNormal it syncs its WAL
// as `sync_every` says; under kFull each COMMIT already did.
absl::Status PrepareSqlite(int n, const std::string& dir,
                           SqliteOutbox::Synchronous synchronous, int batch,
                           absl::Duration sync_every, AckSide* side) {
  side->path = absl::StrCat(dir, "/", side->name.key);
  std::filesystem::create_directories(side->path);
  const std::string file = side->path + "/outbox.sqlite3";
  {
    OUTBOX_ASSIGN_OR_RETURN(
        std::unique_ptr<SqliteOutbox> fill,
        SqliteOutbox::Open(file, SqliteOutbox::Synchronous::kOff));
    for (int i = 0; i < n; ++i) OUTBOX_RETURN_IF_ERROR(fill->CommitOrder(0, i));
  }
  OUTBOX_ASSIGN_OR_RETURN(side->db, SqliteOutbox::Open(file, synchronous));
  SqliteOutbox* db = side->db.get();
  AckOps ops;
  ops.take_and_ack = [db](int limit) { return db->AckOldest(limit); };
  if (synchronous == SqliteOutbox::Synchronous::kNormal) {
    ops.sync = [db] { return db->SyncWal(); };
  }
  side->subject = Subject([ops, batch, sync_every](int64_t, int count) {
    return AckSlice(ops, count, batch, sync_every);
  });
  return SyncFiles(side->path);  // the fill was not synced
}

// Checks that the side acknowledged what it timed, then closes it and counts
// what its close (SQLite) or reopen (ours) writes.
absl::Status Finish(int n, AckSide& side) {
  const int64_t left = n - side.subject.total.ops;
  if (side.store != nullptr) {
    OUTBOX_RETURN_IF_ERROR(ExpectPending(*side.store, left, side.name.key));
    // As for commits, the acknowledgements are flushed at the reopen.
    OUTBOX_ASSIGN_OR_RETURN(side.deferred,
                            FlushBytes(std::move(side.store), side.path));
    side.deferred_at = "at the flush (reopen)";
    return absl::OkStatus();
  }
  OUTBOX_ASSIGN_OR_RETURN(const int64_t unsent, side.db->CountUnsent());
  if (unsent != left) {
    return absl::InternalError(absl::StrCat(side.name.key, ": ", unsent,
                                            " rows unsent, expected ", left));
  }
  const int64_t before = WriteBytes();
  side.db.reset();  // closing checkpoints the WAL into the database
  side.deferred = WriteBytes() - before;
  side.deferred_at = "at the checkpoint (close)";
  return absl::OkStatus();
}

void AddRateRow(AckSide& side, Table* table) {
  Latencies& latencies = side.subject.total.latencies;
  std::vector<Ratio> ratios;
  if (!side.name.vs.empty()) ratios.push_back(Vs(side.name.vs));
  table->Add(Row{side.name.key,
                 absl::StrCat(side.name.contract, ", ", side.name.who, ": ",
                              side.name.how),
                 side.subject.total.per_second(), "/s",
                 absl::StrFormat("per event: p50 %s us, p99 %s us",
                                 FormatFigure(latencies.Percentile(50)),
                                 FormatFigure(latencies.Percentile(99))),
                 std::move(ratios)});
}

// Bytes per event all told: written during the rounds (process-wide
// write_bytes, bench_rounds.h) plus what the rounds left to write later.
void AddBytesRow(const AckSide& side, Table* table) {
  const double ops = side.subject.total.ops;
  const double during = side.subject.written / ops;
  const double later = side.deferred / ops;
  std::vector<Ratio> ratios;
  if (!side.name.vs.empty()) ratios.push_back(Vs("bytes." + side.name.vs));
  table->Add(Row{"bytes." + side.name.key,
                 absl::StrCat("bytes written per acknowledged event, ",
                              side.name.contract, ", ", side.name.who),
                 during + later, "B",
                 absl::StrCat(FormatFigure(during), " B in the rounds + ",
                              FormatFigure(later), " B ", side.deferred_at),
                 std::move(ratios)});
}

// The lazy contract: writes of up to 8, synced every 1 s and after each
// slice, on both sides.
absl::Status PrepareLazy(int n, const std::string& dir, AckSide* ours,
                         AckSide* sqlite) {
  const std::string contract =
      absl::StrCat("ack, lazy (", kTakeLimit, " per write; synced every ",
                   absl::ToInt64Seconds(kSyncInterval),
                   " s and after each slice of ", SliceSize(kRounds, n), ")");
  ours->name = SideName{"ack.lazy", "sqlite.ack.lazy", contract, "edge-outbox",
                        "NextDue + Settle, Store::Sync (what the agent does)"};
  sqlite->name =
      SideName{"sqlite.ack.lazy", "", contract, "SQLite",
               "SELECT the oldest unsent + UPDATE them in one transaction, WAL "
               "synchronous=NORMAL, fdatasync of the WAL"};
  OUTBOX_RETURN_IF_ERROR(PrepareStore(n, dir, kSyncInterval, ours));
  return PrepareSqlite(n, dir, SqliteOutbox::Synchronous::kNormal, kTakeLimit,
                       kSyncInterval, sqlite);
}

// The durable contract: writes of up to 8, each synced, on both sides.
absl::Status PrepareDurable(int n, const std::string& dir, AckSide* ours,
                            AckSide* sqlite) {
  const std::string contract = absl::StrCat(
      "ack, durable per batch (", kTakeLimit, " per write, each synced)");
  ours->name = SideName{"ack.durable", "sqlite.ack.durable", contract,
                        "edge-outbox", "NextDue + Settle + Store::Sync"};
  sqlite->name =
      SideName{"sqlite.ack.durable", "", contract, "SQLite",
               "SELECT the oldest unsent + UPDATE them in one transaction, WAL "
               "synchronous=FULL (each COMMIT fsyncs the WAL)"};
  OUTBOX_RETURN_IF_ERROR(PrepareStore(n, dir, absl::ZeroDuration(), ours));
  return PrepareSqlite(n, dir, SqliteOutbox::Synchronous::kFull, kTakeLimit,
                       absl::ZeroDuration(), sqlite);
}

// Seed 000's sender as it stands: one row per synced transaction. No side
// of ours keeps that contract, so it has no ratio.
absl::Status PrepareReference(int n, const std::string& dir, AckSide* sqlite) {
  sqlite->name = SideName{
      "sqlite.ack.each", "",
      "ack, durable per event (1 per write, each synced)", "SQLite",
      "seed 000's sender, SELECT the oldest unsent + UPDATE it, WAL "
      "synchronous=FULL; a reference: no row of ours keeps this contract"};
  return PrepareSqlite(n, dir, SqliteOutbox::Synchronous::kFull, 1,
                       absl::ZeroDuration(), sqlite);
}

}  // namespace

absl::Status RunAckRows(const Scale& scale, const std::string& dir,
                        Table* table) {
  const int n = scale.commits;
  AckSide ours_lazy, sqlite_lazy, ours_durable, sqlite_durable, sqlite_each;
  OUTBOX_RETURN_IF_ERROR(PrepareLazy(n, dir, &ours_lazy, &sqlite_lazy));
  OUTBOX_RETURN_IF_ERROR(
      PrepareDurable(n, dir, &ours_durable, &sqlite_durable));
  OUTBOX_RETURN_IF_ERROR(PrepareReference(n, dir, &sqlite_each));
  AckSide* sides[] = {&ours_lazy, &sqlite_lazy, &ours_durable, &sqlite_durable,
                      &sqlite_each};
  std::vector<Subject*> subjects;
  for (AckSide* side : sides) subjects.push_back(&side->subject);
  OUTBOX_RETURN_IF_ERROR(RunRounds(kRounds, n, subjects));

  for (AckSide* side : sides) OUTBOX_RETURN_IF_ERROR(Finish(n, *side));
  for (AckSide* side : sides) AddRateRow(*side, table);
  for (AckSide* side : sides) AddBytesRow(*side, table);
  return absl::OkStatus();
}

}  // namespace outbox::bench
