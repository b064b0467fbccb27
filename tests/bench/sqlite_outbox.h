// Copyright (c) edge-outbox authors.
//
// The SQLite baseline: seed 000's outbox (/work/shared/seeds/000_*.txt). One
// transaction writes the order row and its outbox row; the sender selects the
// oldest unsent row and sets its sent_at. WAL journal, synchronous=FULL (an
// fsync of the WAL per commit, as Options::sync), one connection per thread
// with a busy timeout. The seed's own advice for production, an index over
// the unsent rows, is added as a partial index: without it "SELECT oldest
// unsent" walks every row already sent and the baseline would slow down by
// itself as the table grows.

#ifndef OUTBOX_TESTS_BENCH_SQLITE_OUTBOX_H_
#define OUTBOX_TESTS_BENCH_SQLITE_OUTBOX_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace outbox::bench {

// One connection. REQUIRES: External synchronization (one per thread).
class SqliteOutbox {
 public:
  // Opens the database at `path` (creating it and its schema if needed),
  // with synchronous=FULL, or OFF when `sync` is false (to fill a database
  // whose shape only matters). Errors: kUnavailable with SQLite's message.
  static absl::StatusOr<std::unique_ptr<SqliteOutbox>> Open(
      const std::string& path, bool sync = true);
  ~SqliteOutbox();
  SqliteOutbox(const SqliteOutbox&) = delete;
  SqliteOutbox& operator=(const SqliteOutbox&) = delete;

  // One transaction: order "order-<producer>-<i>" (a 200 B status) and its
  // outbox row (event "evt-<producer>-<i>", a 300 B payload).
  absl::Status CommitOrder(int producer, int64_t i);

  // The sender's step for one event: SELECT the oldest unsent row, then
  // UPDATE its sent_at (its own transaction). False if nothing was unsent.
  absl::StatusOr<bool> AckOldest();

  // How many outbox rows are unsent (sent_at IS NULL).
  absl::StatusOr<int64_t> CountUnsent();

 private:
  explicit SqliteOutbox(sqlite3* db) : db_(db) {}
  absl::Status Prepare();
  absl::Status Exec(const char* sql);
  // Runs `stmt` to completion and resets it.
  absl::Status Step(sqlite3_stmt* stmt);
  absl::Status Error(const char* what) const;

  sqlite3* db_;
  sqlite3_stmt* insert_order_ = nullptr;
  sqlite3_stmt* insert_event_ = nullptr;
  sqlite3_stmt* select_oldest_ = nullptr;
  sqlite3_stmt* mark_sent_ = nullptr;
};

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_SQLITE_OUTBOX_H_
