// Copyright (c) edge-outbox authors.
//
// How outboxctl opens the store: read-only beside a running agent, or for
// writing with every table the store already has.

#ifndef OUTBOX_TOOLS_CTL_STORE_ACCESS_H_
#define OUTBOX_TOOLS_CTL_STORE_ACCESS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "outbox/store.h"

namespace outbox::ctl {

// Opens the existing store at `db` for reading (Store::OpenReadOnly): works
// while another process, such as outbox-agent, has it open for writing, and
// shows the store as of the open.
// Errors: kNotFound if there is no store at `db`; as Store::OpenReadOnly.
absl::StatusOr<std::unique_ptr<Store>> OpenForReading(const std::string& db);

// Opens the existing store at `db` for writing with all of its tables, plus
// `new_table` if it is not empty and not yet in the store. Creates a store
// only if `create` (a mistyped --db must not leave an empty store behind),
// and then only where Store::Open would: a new or empty directory.
// Errors: kNotFound (no store at `db` and !create); kUnavailable with a
// message saying to stop the other process when the store is in use (the
// agent holds it for as long as it runs); others as Store::Open.
absl::StatusOr<std::unique_ptr<Store>> OpenForWriting(
    const std::string& db, absl::string_view new_table = {},
    bool create = false);

// Closes a store that was written to, so that a failure to sync the log at
// the end is reported instead of lost. Errors: as Store::Close.
absl::Status CloseStore(std::unique_ptr<Store> store);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_STORE_ACCESS_H_
