// Copyright (c) edge-outbox authors.
//
// The SQLite baseline: seed 000's outbox (/work/shared/seeds/000_*.txt). One
// transaction writes the order row and its outbox row; the sender selects the
// oldest unsent rows and sets their sent_at. WAL journal, with the sync mode
// each row's contract asks for (Synchronous), one connection per thread with
// a busy timeout. The seed's own advice for production, an index over the
// unsent rows, is added as a partial index: without it "SELECT oldest
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
  // PRAGMA synchronous, in WAL mode: what a COMMIT promises.
  enum class Synchronous {
    // Never syncs: to fill a database whose shape only matters.
    kOff,
    // Syncs the WAL only at checkpoints: a power cut may undo the last
    // transactions, never half of one (a Store's unsynced writes). SyncWal()
    // makes them durable, as Store::Sync does ours.
    kNormal,
    // fsyncs the WAL at every COMMIT: each transaction survives a power cut,
    // as a Store's synced writes (Options::sync) do.
    kFull,
  };

  // Opens the database at `path` (creating it and its schema if needed).
  // Errors: kUnavailable with SQLite's message.
  static absl::StatusOr<std::unique_ptr<SqliteOutbox>> Open(
      const std::string& path, Synchronous synchronous = Synchronous::kFull);
  ~SqliteOutbox();
  SqliteOutbox(const SqliteOutbox&) = delete;
  SqliteOutbox& operator=(const SqliteOutbox&) = delete;

  // One transaction: order "order-<producer>-<i>" (a 200 B status) and its
  // outbox row (event "evt-<producer>-<i>", a 300 B payload).
  absl::Status CommitOrder(int producer, int64_t i);

  // The sender's step for up to `limit` events, in one transaction: SELECT
  // the oldest unsent rows, then UPDATE each one's sent_at by event_id (seed
  // 000's statements). Returns how many; 0 if nothing was unsent.
  absl::StatusOr<int> AckOldest(int limit);

  // Makes every committed transaction durable: an fdatasync() of the WAL
  // file, what a COMMIT under kFull ends with. SQLite has no call that syncs
  // the WAL alone; a checkpoint would sync it too, but would also copy its
  // pages into the database and sync that, which no contract here asks for.
  // Errors: kUnavailable.
  absl::Status SyncWal();

  // How many outbox rows are unsent (sent_at IS NULL).
  absl::StatusOr<int64_t> CountUnsent();

 private:
  explicit SqliteOutbox(sqlite3* db) : db_(db) {}
  absl::Status Prepare();
  absl::Status Exec(const char* sql);
  // Runs `stmt` to completion and resets it.
  absl::Status Step(sqlite3_stmt* stmt);
  absl::Status Error(const char* what) const;
  // AckOldest's work inside its transaction.
  absl::StatusOr<int> MarkOldestSent(int limit);

  sqlite3* db_;
  sqlite3_stmt* insert_order_ = nullptr;
  sqlite3_stmt* insert_event_ = nullptr;
  sqlite3_stmt* select_oldest_ = nullptr;
  sqlite3_stmt* mark_sent_ = nullptr;
};

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_SQLITE_OUTBOX_H_
