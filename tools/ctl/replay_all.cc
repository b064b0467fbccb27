// Copyright (c) edge-outbox authors.

#include "tools/ctl/replay_all.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/text.h"

namespace outbox::ctl {
namespace {

// Dead letters are read this many at a time: the store has no cursor, so
// each round lists from the start, where only the ones left behind (failed
// or undecodable) remain before new ones.
constexpr size_t kBatch = 256;

struct Tally {
  size_t replayed = 0;
  size_t skipped = 0;
  size_t failed = 0;
  absl::Status first_error;
};

}  // namespace

absl::Status ReplayAll(Store* store, std::FILE* out) {
  Tally tally;
  absl::flat_hash_set<std::string> left_behind;
  bool queue_full = false;
  while (!queue_full) {
    OUTBOX_ASSIGN_OR_RETURN(
        std::vector<DeadLetter> batch,
        store->ListDeadLetters(left_behind.size() + kBatch));
    bool progressed = false;
    for (const DeadLetter& dead : batch) {
      const std::string& id = dead.event.id;
      if (left_behind.contains(id)) continue;
      progressed = true;
      if (dead.undecodable) {
        ++tally.skipped;
        left_behind.insert(id);
        Write(out, absl::StrCat("skipped ", Quote(id), " (undecodable)\n"));
        continue;
      }
      absl::Status s = store->Replay(id);
      if (s.ok()) {
        ++tally.replayed;
        Write(out, absl::StrCat("replayed ", Quote(id), "\n"));
        continue;
      }
      ++tally.failed;
      left_behind.insert(id);
      Write(out, absl::StrCat("failed ", Quote(id), " (",
                              absl::StatusCodeToString(s.code()), ")\n"));
      if (tally.first_error.ok()) tally.first_error = s;
      // A full queue fails every later replay the same way.
      if (absl::IsResourceExhausted(s)) {
        queue_full = true;
        break;
      }
    }
    if (!progressed) break;
  }
  std::string summary = absl::StrCat("replayed ", tally.replayed);
  if (tally.skipped > 0) {
    absl::StrAppend(&summary, ", skipped ", tally.skipped, " undecodable");
  }
  if (tally.failed == 0) {
    Write(out, absl::StrCat(tally.replayed + tally.skipped == 0
                                ? std::string("no dead letters to replay")
                                : summary,
                            "\n"));
    return absl::OkStatus();
  }
  absl::StrAppend(&summary, ", failed ", tally.failed,
                  queue_full ? " (stopped: the pending queue is full; the "
                               "rest stay dead letters)"
                             : "",
                  "; first failure: ", tally.first_error.message());
  return absl::Status(tally.first_error.code(), summary);
}

}  // namespace outbox::ctl
