// Copyright (c) edge-outbox authors.
//
// outboxctl purge-dead --older-than D: deletes old dead letters.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/ctl/command.h"
#include "tools/ctl/store_access.h"
#include "tools/ctl/text.h"
#include "lib/status_macros.h"

namespace outbox::ctl {
namespace {

constexpr char kUsage[] =
    "usage: outboxctl --db DIR purge-dead --older-than DURATION\n"
    "\n"
    "Deletes the dead letters that died more than DURATION ago. Undecodable\n"
    "dead letters are kept (deleting them would hide corruption). Prints how\n"
    "many were deleted. Writes: stop outbox-agent first.\n"
    "\n"
    "  --older-than D   required; a positive duration such as 72h, 30m or\n"
    "                   1h30m (units: h, m, s, ms; no days)\n";

absl::Status RunPurgeDead(const CommandContext& context,
                          const ParsedArgs& args) {
  if (!args.positional.empty()) {
    return UsageError("purge-dead takes no arguments besides --older-than");
  }
  OUTBOX_ASSIGN_OR_RETURN(const std::string text,
                          RequiredFlag(args, "older-than"));
  absl::Duration age;
  if (!absl::ParseDuration(text, &age) || age <= absl::ZeroDuration() ||
      age == absl::InfiniteDuration()) {
    return UsageError(absl::StrCat(
        "--older-than must be a positive, finite duration such as 72h, not '",
        text, "'"));
  }
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForWriting(context.db));
  const absl::Time cutoff = absl::Now() - age;
  absl::StatusOr<size_t> purged = store->PurgeDeadLetters(cutoff);
  absl::Status closed = CloseStore(std::move(store));
  if (!purged.ok()) return purged.status();
  OUTBOX_RETURN_IF_ERROR(closed);
  Write(context.out, absl::StrCat("purged ", *purged, " dead letter",
                                  *purged == 1 ? "" : "s", " that died before ",
                                  FormatRfc3339(cutoff), "\n"));
  return absl::OkStatus();
}

}  // namespace

const Command& PurgeDeadCommand() {
  static const Command* const command =
      new Command{"purge-dead",
                  "delete dead letters older than a duration",
                  kUsage,
                  {{"older-than", true}},
                  RunPurgeDead};
  return *command;
}

}  // namespace outbox::ctl
