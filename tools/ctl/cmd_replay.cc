// Copyright (c) edge-outbox authors.
//
// outboxctl replay ID | --all: dead letters back to the pending queue.

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/replay_all.h"
#include "tools/ctl/store_access.h"
#include "tools/ctl/text.h"

namespace outbox::ctl {
namespace {

constexpr char kReplayUsage[] =
    "usage: outboxctl --db DIR replay ID\n"
    "       outboxctl --db DIR replay --all\n"
    "\n"
    "Puts dead letters back at the end of the pending queue with their\n"
    "attempts reset; their ids do not change, so receivers still deduplicate\n"
    "them. Prints each id replayed. With --all, undecodable dead letters are\n"
    "skipped (they cannot be replayed) and any failure is counted; the exit\n"
    "status is 1 if any replay failed. Writes: stop outbox-agent first.\n"
    "\n"
    "  --all   replay every dead letter\n";

absl::Status RunReplay(const CommandContext& context, const ParsedArgs& args) {
  const bool all = args.Has("all");
  if (all == !args.positional.empty() || args.positional.size() > 1) {
    return UsageError("replay needs either one event id or --all");
  }
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForWriting(context.db));
  absl::Status status;
  if (all) {
    status = ReplayAll(store.get(), context.out);
  } else {
    const std::string& id = args.positional[0];
    status = store->Replay(id);
    if (status.ok())
      Write(context.out, absl::StrCat("replayed ", Quote(id), "\n"));
  }
  absl::Status closed = CloseStore(std::move(store));
  return status.ok() ? closed : status;
}

}  // namespace

const Command& ReplayCommand() {
  static const Command* const command =
      new Command{"replay",
                  "move dead letters back to the pending queue",
                  kReplayUsage,
                  {{"all", false}},
                  RunReplay};
  return *command;
}

}  // namespace outbox::ctl
