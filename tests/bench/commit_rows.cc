// Copyright (c) edge-outbox authors.
//
// The write side: the raw write + fdatasync limit of the disk, Commit with 1
// and N producer threads, seed 000's SQLite outbox with 1 and N threads, and
// the bytes each writes per commit.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "lib/status_macros.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/sqlite_outbox.h"

namespace outbox::bench {
namespace {

// Throughput and latency of `total` operations over `producers` threads,
// started together. `make(p)` makes producer p's operation (its own
// connection, say) before the clock starts; the operation gets its index i,
// 0 <= i < total / producers.
struct Throughput {
  double per_second = 0;
  Latencies latencies;
};
using ProducerOp = std::function<absl::Status(int64_t i)>;

absl::StatusOr<Throughput> RunProducers(
    int producers, int total,
    const std::function<absl::StatusOr<ProducerOp>(int producer)>& make) {
  std::vector<ProducerOp> ops;
  for (int p = 0; p < producers; ++p) {
    OUTBOX_ASSIGN_OR_RETURN(ProducerOp op, make(p));
    ops.push_back(std::move(op));
  }
  const int per_producer = total / producers;
  std::vector<Latencies> latencies(producers);
  std::vector<absl::Status> errors(producers);
  absl::Notification start;
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      start.WaitForNotification();
      for (int64_t i = 0; i < per_producer && errors[p].ok(); ++i) {
        Stopwatch op;
        errors[p] = ops[p](i);
        latencies[p].Add(op.Elapsed());
      }
    });
  }
  Stopwatch wall;
  start.Notify();
  for (std::thread& t : threads) t.join();
  const absl::Duration elapsed = wall.Elapsed();
  Throughput result;
  for (int p = 0; p < producers; ++p) {
    OUTBOX_RETURN_IF_ERROR(errors[p]);
    result.latencies.Merge(latencies[p]);
  }
  result.per_second = per_producer * producers / absl::ToDoubleSeconds(elapsed);
  return result;
}

// What a commit row measured.
struct CommitFigures {
  Throughput throughput;
  double written_per_commit = 0;  // /proc/self/io write_bytes
  double log_per_commit = 0;      // RocksDB WAL or SQLite -wal file growth
  double flush_per_commit = 0;    // the later flush/checkpoint of that data
};

// Bytes in the write-ahead logs under `dir`: RocksDB's *.log files, or
// SQLite's <db>-wal.
int64_t LogBytes(const std::string& dir) {
  int64_t bytes = 0;
  std::error_code ignored;
  for (const auto& file : std::filesystem::directory_iterator(dir, ignored)) {
    const std::string name = file.path().filename().string();
    if (absl::EndsWith(name, ".log") || absl::EndsWith(name, "-wal")) {
      bytes += static_cast<int64_t>(file.file_size(ignored));
    }
  }
  return bytes;
}

// `bytes` appended with write() and made durable with fdatasync(): what a
// synced commit of that size cannot beat on this disk.
absl::StatusOr<Throughput> MeasureFdatasync(const std::string& path,
                                            size_t bytes, int total) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(std::strerror(errno));
  const std::string block(bytes, 'w');
  absl::StatusOr<Throughput> result =
      RunProducers(1, total, [&](int) -> absl::StatusOr<ProducerOp> {
        return [&](int64_t) {
          if (write(fd, block.data(), block.size()) !=
                  static_cast<ssize_t>(block.size()) ||
              fdatasync(fd) != 0) {
            return absl::UnavailableError(std::strerror(errno));
          }
          return absl::OkStatus();
        };
      });
  close(fd);
  return result;
}

absl::StatusOr<CommitFigures> MeasureStoreCommits(const std::string& path,
                                                  int producers, int total) {
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/true));
  CommitFigures f;
  const int64_t before = WriteBytes();
  OUTBOX_ASSIGN_OR_RETURN(
      f.throughput,
      RunProducers(producers, total, [&](int p) -> absl::StatusOr<ProducerOp> {
        return [&store, p](int64_t i) { return CommitSale(*store, p, i); };
      }));
  const int64_t after = WriteBytes();
  OUTBOX_RETURN_IF_ERROR(
      ExpectPending(*store, total / producers * producers, "commit row"));
  f.written_per_commit = static_cast<double>(after - before) / total;
  f.log_per_commit = static_cast<double>(LogBytes(path)) / total;
  // RocksDB keeps these commits in its memtable; the open after a close
  // replays the log and writes them to a table file, the flush that a
  // longer run would have paid anyway.
  OUTBOX_RETURN_IF_ERROR(store->Close());
  store.reset();
  OUTBOX_ASSIGN_OR_RETURN(store, OpenBenchStore(path, /*sync=*/true));
  f.flush_per_commit = static_cast<double>(WriteBytes() - after) / total;
  OUTBOX_RETURN_IF_ERROR(store->Close());
  return f;
}

absl::StatusOr<CommitFigures> MeasureSqliteCommits(const std::string& dir,
                                                   int threads, int total) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/outbox.sqlite3";
  // Creates the schema before the producers' connections race to.
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<SqliteOutbox> first,
                          SqliteOutbox::Open(path));
  std::vector<std::unique_ptr<SqliteOutbox>> connections;
  connections.push_back(std::move(first));
  for (int t = 1; t < threads; ++t) {
    OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<SqliteOutbox> c,
                            SqliteOutbox::Open(path));
    connections.push_back(std::move(c));
  }
  CommitFigures f;
  const int64_t before = WriteBytes();
  OUTBOX_ASSIGN_OR_RETURN(
      f.throughput,
      RunProducers(threads, total, [&](int p) -> absl::StatusOr<ProducerOp> {
        SqliteOutbox* db = connections[p].get();
        return [db, p](int64_t i) { return db->CommitOrder(p, i); };
      }));
  const int64_t after = WriteBytes();
  f.written_per_commit = static_cast<double>(after - before) / total;
  f.log_per_commit = static_cast<double>(LogBytes(dir)) / total;
  // The last connection to close checkpoints the WAL into the database.
  connections.clear();
  f.flush_per_commit = static_cast<double>(WriteBytes() - after) / total;
  return f;
}

std::string LatencyDetail(Throughput& t) {
  return absl::StrFormat("p50 %s us, p99 %s us",
                         FormatFigure(t.latencies.Percentile(50)),
                         FormatFigure(t.latencies.Percentile(99)));
}

std::string BytesDetail(const CommitFigures& f) {
  return absl::StrCat(FormatFigure(f.log_per_commit), " B to the WAL; +",
                      FormatFigure(f.flush_per_commit),
                      " B at flush/checkpoint");
}

void AddCommitRow(const std::string& key, const std::string& label,
                  CommitFigures& f, std::vector<Ratio> ratios, Table* table) {
  table->AddFigure(key + ".p99", label + " p99",
                   f.throughput.latencies.Percentile(99));
  table->Add(Row{key, label, f.throughput.per_second, "/s",
                 LatencyDetail(f.throughput), std::move(ratios)});
}

}  // namespace

absl::Status RunCommitRows(const Scale& scale, const std::string& dir,
                           Table* table) {
  const int n = scale.commits, threads = scale.producers;
  const std::string many = absl::StrCat(threads);
  OUTBOX_ASSIGN_OR_RETURN(CommitFigures one,
                          MeasureStoreCommits(dir + "/commit-1", 1, n));
  OUTBOX_ASSIGN_OR_RETURN(
      CommitFigures several,
      MeasureStoreCommits(dir + "/commit-" + many, threads, n));
  OUTBOX_ASSIGN_OR_RETURN(CommitFigures sqlite_one,
                          MeasureSqliteCommits(dir + "/sqlite-1", 1, n));
  OUTBOX_ASSIGN_OR_RETURN(
      CommitFigures sqlite_several,
      MeasureSqliteCommits(dir + "/sqlite-" + many, threads, n));
  // The limit writes as many bytes per sync as one commit adds to the WAL.
  const size_t commit_bytes = static_cast<size_t>(one.log_per_commit);
  OUTBOX_ASSIGN_OR_RETURN(
      Throughput limit,
      MeasureFdatasync(dir + "/fdatasync.dat", commit_bytes, n));

  table->AddFigure("limit.p50", "limit p50", limit.latencies.Percentile(50));
  table->Add(Row{"limit",
                 absl::StrCat("write + fdatasync of ", commit_bytes,
                              " B appended (one commit's WAL bytes): limit"),
                 limit.per_second,
                 "/s",
                 LatencyDetail(limit),
                 {}});
  AddCommitRow("commit.1", "Commit, 1 producer", one,
               {Vs("limit"), Vs("sqlite.1")}, table);
  AddCommitRow("commit.n", absl::StrCat("Commit, ", many, " producers"),
               several,
               {Vs("limit"), Vs("sqlite.n"), Vs("commit.1"),
                Ratio{"commit.n.p99", "limit.p50"}},
               table);
  AddCommitRow("sqlite.1", "SQLite outbox commit, 1 thread", sqlite_one,
               {Vs("limit")}, table);
  AddCommitRow("sqlite.n",
               absl::StrCat("SQLite outbox commit, ", many, " threads"),
               sqlite_several, {Vs("limit"), Vs("sqlite.1")}, table);
  table->Add(Row{"bytes.commit",
                 "bytes written per commit, Commit 1 producer",
                 one.written_per_commit,
                 "B",
                 BytesDetail(one),
                 {Vs("bytes.sqlite_commit")}});
  table->Add(Row{"bytes.sqlite_commit",
                 "bytes written per commit, SQLite 1 thread",
                 sqlite_one.written_per_commit,
                 "B",
                 BytesDetail(sqlite_one),
                 {}});
  return absl::OkStatus();
}

}  // namespace outbox::bench
