// Copyright (c) edge-outbox authors.
//
// The write side: the raw write + fdatasync limit of the disk, Commit with 1
// and N producer threads, seed 000's SQLite outbox with 1 and N threads, and
// the bytes each writes per commit. Every commit on both sides is one
// transaction synced before it returns (Options::sync; synchronous=FULL).
// SQLite lets one writer in at a time, and seed 000's N connections wait for
// it in SQLite's busy handler, which sleeps 1, 2, 5, ... ms between tries and
// leaves the lock idle meanwhile; so the N threads also run taking turns on
// a mutex of the process, which hands the lock over at once: the most N
// threads of one process get from SQLite. All six are measured in rounds
// (bench_rounds.h), so that they meet the same disk.

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_rounds.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/sqlite_outbox.h"

namespace outbox::bench {
namespace {

constexpr int kRounds = 50;

// Bytes in RocksDB's write-ahead logs (*.log) under `dir`.
int64_t LogBytes(const std::string& dir) {
  int64_t bytes = 0;
  std::error_code ignored;
  for (const auto& file : std::filesystem::directory_iterator(dir, ignored)) {
    const std::string name = file.path().filename().string();
    if (absl::EndsWith(name, ".log")) {
      bytes += static_cast<int64_t>(file.file_size(ignored));
    }
  }
  return bytes;
}

// What one Commit adds to RocksDB's WAL, from a scratch store, measured
// while it is open (a clean close flushes the memtables, and RocksDB then
// deletes the log).
absl::StatusOr<size_t> WalBytesPerCommit(const std::string& path) {
  constexpr int kSample = 1000;
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/false));
  OUTBOX_RETURN_IF_ERROR(CommitSales(*store, 0, 0, kSample));
  const int64_t bytes = LogBytes(path);
  OUTBOX_RETURN_IF_ERROR(store->Close());
  if (bytes <= 0) return absl::InternalError("no log written by the sample");
  return static_cast<size_t>(bytes / kSample);
}

// Subjects: slices of `producers` threads running `op(p, i)`.
template <typename Op>
Subject ProducerSubject(int producers, Op op) {
  return Subject([producers, op](int64_t first, int count) {
    return RunProducers(producers, first, count,
                        [op](int p) -> absl::StatusOr<ProducerOp> {
                          return [op, p](int64_t i) { return op(p, i); };
                        });
  });
}

absl::StatusOr<std::vector<std::unique_ptr<SqliteOutbox>>> OpenConnections(
    const std::string& dir, int n) {
  std::filesystem::create_directories(dir);
  std::vector<std::unique_ptr<SqliteOutbox>> connections;
  for (int i = 0; i < n; ++i) {  // the first creates the schema
    OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<SqliteOutbox> c,
                            SqliteOutbox::Open(dir + "/outbox.sqlite3"));
    connections.push_back(std::move(c));
  }
  return connections;
}

// One thread per connection of `dbs` committing orders; with `turn`, each
// commit holds it. Both must outlive the subject.
Subject SqliteSubject(std::vector<std::unique_ptr<SqliteOutbox>>* dbs,
                      absl::Mutex* turn) {
  return ProducerSubject(static_cast<int>(dbs->size()),
                         [dbs, turn](int p, int64_t i) {
                           absl::MutexLockMaybe l(turn);
                           return (*dbs)[p]->CommitOrder(p, i);
                         });
}

std::string LatencyDetail(Throughput& t) {
  return absl::StrFormat("p50 %s us, p99 %s us",
                         FormatFigure(t.latencies.Percentile(50)),
                         FormatFigure(t.latencies.Percentile(99)));
}

void AddRateRow(const std::string& key, const std::string& label, Subject& s,
                std::vector<Ratio> ratios, Table* table) {
  table->AddFigure(key + ".p50", label + " p50",
                   s.total.latencies.Percentile(50));
  table->AddFigure(key + ".p99", label + " p99",
                   s.total.latencies.Percentile(99));
  table->Add(Row{key, label, s.total.per_second(), "/s", LatencyDetail(s.total),
                 std::move(ratios)});
}

std::string PerCommit(int64_t bytes, const Subject& s) {
  return FormatFigure(static_cast<double>(bytes) / s.total.ops);
}

// Bytes per commit all told: written during the rounds (process-wide
// write_bytes) plus `later`, what the rounds left to write at `later_at`.
// Both count: RocksDB flushes its memtable only at the reopen here, while
// SQLite checkpoints its WAL during the rounds every 1,000 pages.
void AddBytesRow(const std::string& key, const std::string& label,
                 const Subject& s, const std::string& in_rounds, int64_t later,
                 const std::string& later_at, std::vector<Ratio> ratios,
                 Table* table) {
  table->Add(
      Row{key, label, static_cast<double>(s.written + later) / s.total.ops, "B",
          absl::StrCat(PerCommit(s.written, s), " B in the rounds", in_rounds,
                       " + ", PerCommit(later, s), " B ", later_at),
          std::move(ratios)});
}

}  // namespace

absl::Status RunCommitRows(const Scale& scale, const std::string& dir,
                           Table* table) {
  const int n = scale.commits, threads = scale.producers;
  const std::string many = absl::StrCat(threads);
  OUTBOX_ASSIGN_OR_RETURN(size_t commit_bytes,
                          WalBytesPerCommit(dir + "/wal-sample"));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<AppendFile> file,
                          AppendFile::Open(dir + "/limit.dat", commit_bytes));
  const std::string one_path = dir + "/commit-1", many_path = dir + "/commit-n";
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> one_store,
                          OpenBenchStore(one_path, /*sync=*/true));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> many_store,
                          OpenBenchStore(many_path, /*sync=*/true));
  OUTBOX_ASSIGN_OR_RETURN(auto one_db, OpenConnections(dir + "/sqlite-1", 1));
  OUTBOX_ASSIGN_OR_RETURN(auto many_db,
                          OpenConnections(dir + "/sqlite-n", threads));
  OUTBOX_ASSIGN_OR_RETURN(auto turns_db,
                          OpenConnections(dir + "/sqlite-n-turns", threads));

  AppendFile* f = file.get();
  Store *s1 = one_store.get(), *sn = many_store.get();
  Subject limit =
      ProducerSubject(1, [f](int, int64_t) { return f->AppendAndSync(); });
  Subject one = ProducerSubject(
      1, [s1](int p, int64_t i) { return CommitSale(*s1, p, i); });
  Subject several = ProducerSubject(
      threads, [sn](int p, int64_t i) { return CommitSale(*sn, p, i); });
  Subject sqlite_one = SqliteSubject(&one_db, nullptr);
  Subject sqlite_several = SqliteSubject(&many_db, nullptr);
  absl::Mutex turn;
  Subject sqlite_turns = SqliteSubject(&turns_db, &turn);
  OUTBOX_RETURN_IF_ERROR(RunRounds(
      kRounds, n,
      {&limit, &one, &several, &sqlite_one, &sqlite_several, &sqlite_turns}));

  OUTBOX_RETURN_IF_ERROR(
      ExpectPending(*one_store, one.total.ops, "commit row, 1 producer"));
  OUTBOX_RETURN_IF_ERROR(
      ExpectPending(*many_store, several.total.ops, "commit row, N producers"));
  const int64_t one_log = LogBytes(one_path);  // RocksDB never recycles it
  OUTBOX_ASSIGN_OR_RETURN(int64_t one_flush,
                          FlushBytes(std::move(one_store), one_path));
  OUTBOX_RETURN_IF_ERROR(FlushBytes(std::move(many_store), many_path).status());
  const int64_t before_checkpoint = WriteBytes();
  one_db.clear();  // closing the last connection checkpoints the WAL
  const int64_t sqlite_flush = WriteBytes() - before_checkpoint;

  AddRateRow("limit",
             absl::StrCat("fdatasync limit (", commit_bytes,
                          " B appended + fdatasync, as one commit's WAL)"),
             limit, {}, table);
  AddRateRow("commit.1", "Commit, 1 producer", one,
             {Vs("limit"), Vs("sqlite.1")}, table);
  AddRateRow("commit.n", absl::StrCat("Commit, ", many, " producers"), several,
             {Vs("limit"), Vs("sqlite.n"), Vs("sqlite.n.turns"), Vs("commit.1"),
              Ratio{"commit.n.p99", "limit.p50"}},
             table);
  AddRateRow("sqlite.1", "SQLite outbox commit, 1 thread", sqlite_one,
             {Vs("limit")}, table);
  AddRateRow(
      "sqlite.n",
      absl::StrCat("SQLite outbox commit, ", many, " threads (busy timeout)"),
      sqlite_several, {Vs("limit"), Vs("sqlite.1")}, table);
  AddRateRow("sqlite.n.turns",
             absl::StrCat("SQLite outbox commit, ", many,
                          " threads taking turns on a mutex"),
             sqlite_turns, {Vs("limit"), Vs("sqlite.1")}, table);
  AddBytesRow(
      "bytes.commit", "bytes written per commit, Commit 1 producer", one,
      absl::StrCat(" (", PerCommit(one_log, one), " B to the WAL)"), one_flush,
      "at the flush (reopen)", {Vs("bytes.sqlite_commit")}, table);
  AddBytesRow("bytes.sqlite_commit",
              "bytes written per commit, SQLite 1 thread", sqlite_one, "",
              sqlite_flush, "at the checkpoint (close)", {}, table);
  return absl::OkStatus();
}

}  // namespace outbox::bench
