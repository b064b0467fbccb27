// Copyright (c) edge-outbox authors.

#include "tests/bench/sqlite_outbox.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/bench/bench_ops.h"

namespace outbox::bench {
namespace {

// Seed 000's schema, plus the partial index its production notes ask for.
constexpr char kSchema[] = R"(
  CREATE TABLE IF NOT EXISTS orders (
    order_id TEXT PRIMARY KEY,
    status TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL UNIQUE,
    payload TEXT NOT NULL,
    sent_at TEXT
  );
  CREATE INDEX IF NOT EXISTS outbox_unsent ON outbox(id)
    WHERE sent_at IS NULL;
)";

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteOutbox>> SqliteOutbox::Open(
    const std::string& path, Synchronous synchronous) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open(path.c_str(), &db);
  std::unique_ptr<SqliteOutbox> outbox(new SqliteOutbox(db));
  if (rc != SQLITE_OK) return outbox->Error("opening the database");
  // Producers on other connections wait for the write lock instead of
  // failing at once with SQLITE_BUSY.
  sqlite3_busy_timeout(db, 10000);
  OUTBOX_RETURN_IF_ERROR(outbox->Exec("PRAGMA journal_mode=WAL"));
  switch (synchronous) {
    case Synchronous::kOff:
      OUTBOX_RETURN_IF_ERROR(outbox->Exec("PRAGMA synchronous=OFF"));
      break;
    case Synchronous::kNormal:
      OUTBOX_RETURN_IF_ERROR(outbox->Exec("PRAGMA synchronous=NORMAL"));
      break;
    case Synchronous::kFull:
      OUTBOX_RETURN_IF_ERROR(outbox->Exec("PRAGMA synchronous=FULL"));
      break;
  }
  OUTBOX_RETURN_IF_ERROR(outbox->Exec(kSchema));
  OUTBOX_RETURN_IF_ERROR(outbox->Prepare());
  return outbox;
}

SqliteOutbox::~SqliteOutbox() {
  for (sqlite3_stmt* stmt :
       {insert_order_, insert_event_, select_oldest_, mark_sent_}) {
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db_);
}

absl::Status SqliteOutbox::Error(const char* what) const {
  return absl::UnavailableError(
      absl::StrCat("sqlite: ", what, ": ", sqlite3_errmsg(db_)));
}

absl::Status SqliteOutbox::Exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return Error(sql);
  }
  return absl::OkStatus();
}

absl::Status SqliteOutbox::Prepare() {
  const std::pair<const char*, sqlite3_stmt**> statements[] = {
      {"INSERT INTO orders(order_id, status) VALUES (?, ?)", &insert_order_},
      {"INSERT INTO outbox(event_id, payload) VALUES (?, ?)", &insert_event_},
      {"SELECT event_id FROM outbox WHERE sent_at IS NULL ORDER BY id "
       "LIMIT ?",
       &select_oldest_},
      {"UPDATE outbox SET sent_at = CURRENT_TIMESTAMP WHERE event_id = ?",
       &mark_sent_},
  };
  for (const auto& [sql, stmt] : statements) {
    if (sqlite3_prepare_v2(db_, sql, -1, stmt, nullptr) != SQLITE_OK) {
      return Error(sql);
    }
  }
  return absl::OkStatus();
}

absl::Status SqliteOutbox::Step(sqlite3_stmt* stmt) {
  const int rc = sqlite3_step(stmt);
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  if (rc != SQLITE_DONE) return Error(sqlite3_sql(stmt));
  return absl::OkStatus();
}

absl::Status SqliteOutbox::CommitOrder(int producer, int64_t i) {
  static const std::string kStatus(kRecordBytes, 'r');
  const std::string order = absl::StrCat("order-", producer, "-", i);
  const std::string event = absl::StrCat("evt-", producer, "-", i);
  const std::string payload = SalePayload(producer, i);
  // IMMEDIATE takes the write lock up front: two deferred transactions that
  // both read first could not upgrade and would fail with SQLITE_BUSY.
  OUTBOX_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  sqlite3_bind_text(insert_order_, 1, order.data(), order.size(), nullptr);
  sqlite3_bind_text(insert_order_, 2, kStatus.data(), kStatus.size(), nullptr);
  absl::Status s = Step(insert_order_);
  if (s.ok()) {
    sqlite3_bind_text(insert_event_, 1, event.data(), event.size(), nullptr);
    sqlite3_bind_text(insert_event_, 2, payload.data(), payload.size(),
                      nullptr);
    s = Step(insert_event_);
  }
  if (!s.ok()) {
    Exec("ROLLBACK").IgnoreError();
    return s;
  }
  return Exec("COMMIT");
}

absl::StatusOr<int> SqliteOutbox::AckOldest(int limit) {
  // IMMEDIATE, as in CommitOrder: the write lock up front, so that no other
  // writer commits between the SELECT and the UPDATEs (SQLITE_BUSY).
  OUTBOX_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  absl::StatusOr<int> acked = MarkOldestSent(limit);
  if (!acked.ok()) {
    Exec("ROLLBACK").IgnoreError();
    return acked;
  }
  // Under kFull this COMMIT returns after the WAL's fsync.
  OUTBOX_RETURN_IF_ERROR(Exec("COMMIT"));
  return acked;
}

absl::StatusOr<int> SqliteOutbox::MarkOldestSent(int limit) {
  std::vector<std::string> events;
  sqlite3_bind_int(select_oldest_, 1, limit);
  int rc;
  while ((rc = sqlite3_step(select_oldest_)) == SQLITE_ROW) {
    events.emplace_back(
        reinterpret_cast<const char*>(sqlite3_column_text(select_oldest_, 0)));
  }
  sqlite3_reset(select_oldest_);
  sqlite3_clear_bindings(select_oldest_);
  if (rc != SQLITE_DONE) return Error("selecting the oldest unsent events");
  for (const std::string& event : events) {
    sqlite3_bind_text(mark_sent_, 1, event.data(), event.size(), nullptr);
    OUTBOX_RETURN_IF_ERROR(Step(mark_sent_));
  }
  return static_cast<int>(events.size());
}

absl::Status SqliteOutbox::SyncWal() {
  const char* wal = sqlite3_filename_wal(sqlite3_db_filename(db_, "main"));
  // fsync is per file, not per descriptor: syncing through a descriptor of
  // our own makes what SQLite's write()s left in the page cache durable.
  const int fd = open(wal, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fdatasync(fd) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    return absl::UnavailableError(
        absl::StrCat("syncing ", wal, ": ", std::strerror(error)));
  }
  close(fd);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteOutbox::CountUnsent() {
  sqlite3_stmt* count = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "SELECT count(*) FROM outbox WHERE sent_at IS NULL",
                         -1, &count, nullptr) != SQLITE_OK) {
    return Error("counting unsent rows");
  }
  const bool ok = sqlite3_step(count) == SQLITE_ROW;
  const int64_t unsent = ok ? sqlite3_column_int64(count, 0) : -1;
  sqlite3_finalize(count);
  if (!ok) return Error("counting unsent rows");
  return unsent;
}

}  // namespace outbox::bench
