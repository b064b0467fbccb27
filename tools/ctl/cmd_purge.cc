// Copyright (c) edge-outbox authors.
//
// outboxctl purge-dead --older-than D | ID: deletes old dead letters, or one.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/store_access.h"
#include "tools/ctl/text.h"

namespace outbox::ctl {
namespace {

constexpr char kPurgeUsage[] =
    "usage: outboxctl --db DIR purge-dead --older-than DURATION\n"
    "       outboxctl --db DIR purge-dead ID\n"
    "\n"
    "Deletes the dead letters that died more than DURATION ago, except\n"
    "undecodable ones: they hold the only copy of damaged bytes, so age never\n"
    "deletes them. Age is measured on the store's own clock, the time the\n"
    "store has been open, which a wall clock set ahead or back does not\n"
    "move: nothing younger than DURATION is ever deleted. `purge-dead ID`\n"
    "deletes the one dead letter ID, undecodable or not (look at it first\n"
    "with `show ID`). Prints how many were deleted; `stats` counts every\n"
    "deletion (dead letters purged). Writes: stop outbox-agent first.\n"
    "\n"
    "  --older-than D   a positive duration such as 72h, 30m or 1h30m\n"
    "                   (units: h, m, s, ms; no days)\n";

absl::Status PurgeOne(const CommandContext& context, const std::string& id) {
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForWriting(context.db));
  absl::Status purged = store->PurgeDeadLetter(id);
  absl::Status closed = CloseStore(std::move(store));
  OUTBOX_RETURN_IF_ERROR(purged);
  OUTBOX_RETURN_IF_ERROR(closed);
  Write(context.out, absl::StrCat("purged dead letter ", Quote(id), "\n"));
  return absl::OkStatus();
}

absl::Status PurgeOlderThan(const CommandContext& context,
                            const std::string& text) {
  absl::Duration age;
  if (!absl::ParseDuration(text, &age) || age <= absl::ZeroDuration() ||
      age == absl::InfiniteDuration()) {
    return UsageError(absl::StrCat(
        "--older-than must be a positive, finite duration such as 72h, not '",
        text, "'"));
  }
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForWriting(context.db));
  absl::StatusOr<size_t> purged = store->PurgeDeadLetters(age);
  absl::Status closed = CloseStore(std::move(store));
  if (!purged.ok()) return purged.status();
  OUTBOX_RETURN_IF_ERROR(closed);
  Write(context.out, absl::StrCat("purged ", *purged, " dead letter",
                                  *purged == 1 ? "" : "s", " older than ",
                                  absl::FormatDuration(age), "\n"));
  return absl::OkStatus();
}

absl::Status RunPurgeDead(const CommandContext& context,
                          const ParsedArgs& args) {
  const bool by_age = args.Has("older-than");
  const bool by_id = args.positional.size() == 1;
  if (by_age == by_id || args.positional.size() > 1) {  // exactly one of them
    return UsageError(
        "purge-dead takes either --older-than or one dead "
        "letter id");
  }
  if (by_age) return PurgeOlderThan(context, args.Value("older-than"));
  if (args.positional[0].empty()) return UsageError("the id is empty");
  return PurgeOne(context, args.positional[0]);
}

}  // namespace

const Command& PurgeDeadCommand() {
  static const Command* const command =
      new Command{"purge-dead",
                  "delete dead letters older than a duration, or one by id",
                  kPurgeUsage,
                  {{"older-than", true}},
                  RunPurgeDead};
  return *command;
}

}  // namespace outbox::ctl
