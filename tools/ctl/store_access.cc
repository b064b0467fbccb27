// Copyright (c) edge-outbox authors.

#include "tools/ctl/store_access.h"

#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace outbox::ctl {
namespace {

// Checked before opening so that the message names --db rather than
// Options, which an operator never sees.
absl::Status CheckStoreDirectory(const std::string& db) {
  struct stat st;
  if (stat(db.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat(
        "no outbox store at '", db, "' (no such directory; check --db)"));
  }
  return absl::OkStatus();
}

// RocksDB reports another process's LOCK as an I/O error mentioning the lock
// (rocks_status.cc turns it into kUnavailable); nothing else says "lock".
bool IsHeldElsewhere(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnavailable &&
         absl::StrContains(absl::AsciiStrToLower(status.message()), "lock");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> OpenForReading(const std::string& db) {
  OUTBOX_RETURN_IF_ERROR(CheckStoreDirectory(db));
  Options options;
  options.create_if_missing = false;
  return Store::OpenReadOnly(options, db);
}

absl::StatusOr<std::unique_ptr<Store>> OpenForWriting(
    const std::string& db, absl::string_view new_table, bool create) {
  Options options;
  options.create_if_missing = create;
  if (!create) OUTBOX_RETURN_IF_ERROR(CheckStoreDirectory(db));
  // Open refuses a store with tables the caller does not name, so name them
  // all: outboxctl must not need to know the application's schema.
  absl::StatusOr<std::vector<std::string>> tables = Store::ListTables(db);
  if (tables.ok()) {
    options.tables = *std::move(tables);
  } else if (!(create && absl::IsNotFound(tables.status()))) {
    return tables.status();
  }
  if (!new_table.empty() &&
      std::find(options.tables.begin(), options.tables.end(), new_table) ==
          options.tables.end()) {
    options.tables.emplace_back(new_table);
  }
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options, db);
  if (IsHeldElsewhere(store.status())) {
    // The library's message ends in advice much like ours; keep only the
    // RocksDB part as the detail.
    absl::string_view detail = store.status().message();
    detail = detail.substr(0, detail.find(" (the store is open"));
    return absl::UnavailableError(absl::StrCat(
        "the store at '", db,
        "' is in use by another process (e.g. a running outbox-agent); stop "
        "it first, then retry. Read-only commands (stats, list, show, get) "
        "work while it runs. [",
        detail, "]"));
  }
  return store;
}

absl::Status CloseStore(std::unique_ptr<Store> store) { return store->Close(); }

}  // namespace outbox::ctl
