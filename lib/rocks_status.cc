// Copyright (c) edge-outbox authors.

#include "lib/rocks_status.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace outbox {

absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = absl::StrCat(context, ": ", s.ToString());
  if (s.IsNoSpace()) return absl::ResourceExhaustedError(message);
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsNotFound() || s.IsPathNotFound()) {
    return absl::NotFoundError(message);
  }
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(message);
  if (s.IsNotSupported()) return absl::UnimplementedError(message);
  if (s.IsAborted()) return absl::AbortedError(message);
  if (s.IsShutdownInProgress()) return absl::CancelledError(message);
  if (s.IsIOError() && absl::StrContains(s.ToString(), "lock")) {
    // RocksDB reports a held LOCK file as "IO error: lock hold by current
    // process" or "While lock file: ... Resource temporarily unavailable".
    return absl::UnavailableError(absl::StrCat(
        message,
        " (the store is open in another process or object, e.g. a running "
        "outbox-agent; stop it or use a read-only command)"));
  }
  return absl::UnavailableError(message);
}

}  // namespace outbox
