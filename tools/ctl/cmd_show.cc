// Copyright (c) edge-outbox authors.
//
// outboxctl show ID: one pending event or dead letter in full.

#include <string>

#include "absl/strings/str_cat.h"
#include "lib/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/event_format.h"
#include "tools/ctl/store_access.h"
#include "tools/json_bytes.h"

namespace outbox::ctl {
namespace {

constexpr char kUsage[] =
    "usage: outboxctl --db DIR show ID [--json]\n"
    "\n"
    "Prints the pending event or dead letter ID with every field, payload\n"
    "included. Read-only: works while outbox-agent runs.\n"
    "\n"
    "  --json   one JSON object instead of text; the payload is the string\n"
    "           \"payload\" when it is UTF-8, else \"payload_base64\"\n";

absl::Status RunShow(const CommandContext& context, const ParsedArgs& args) {
  if (args.positional.size() != 1 || args.positional[0].empty()) {
    return UsageError("show needs one argument: the event id");
  }
  const std::string& id = args.positional[0];
  const bool json = args.Has("json");
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForReading(context.db));
  // Dead letters first: a point lookup, where a pending event takes a scan.
  absl::StatusOr<DeadLetter> dead = store->FindDeadLetter(id);
  if (dead.ok()) {
    if (!json) {
      Write(context.out, DeadDetail(*dead));
      return absl::OkStatus();
    }
    Write(context.out,
          absl::StrCat(DumpJson(DeadJson(*dead, /*with_payload=*/true)), "\n"));
    return absl::OkStatus();
  }
  if (!absl::IsNotFound(dead.status())) return dead.status();
  absl::StatusOr<PendingEvent> pending = store->FindPending(id);
  if (absl::IsNotFound(pending.status())) {
    return absl::NotFoundError(
        absl::StrCat("no pending event or dead letter with id ", id));
  }
  if (!pending.ok()) return pending.status();
  if (!json) {
    Write(context.out, PendingDetail(*pending));
    return absl::OkStatus();
  }
  Write(context.out,
        absl::StrCat(DumpJson(PendingJson(*pending, /*with_payload=*/true)),
                     "\n"));
  return absl::OkStatus();
}

}  // namespace

const Command& ShowCommand() {
  static const Command* const command =
      new Command{"show",
                  "one pending event or dead letter in full, payload included",
                  kUsage,
                  {{"json", false}},
                  RunShow};
  return *command;
}

}  // namespace outbox::ctl
