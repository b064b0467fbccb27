// Copyright (c) edge-outbox authors.
//
// outboxctl reset-clock-mark: sets the store's wall-clock mark back to now.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/store_access.h"
#include "tools/ctl/text.h"

namespace outbox::ctl {
namespace {

constexpr char kClockMarkUsage[] =
    "usage: outboxctl --db DIR reset-clock-mark\n"
    "\n"
    "Sets the store's clock mark, the newest wall-clock time it has seen, to\n"
    "this machine's time now. outbox-agent holds HTTP and Kafka deliveries\n"
    "while the clock is behind the mark by more than clock_tolerance; if the\n"
    "mark itself is wrong (a clock that once ran ahead carried it into the\n"
    "future), they would wait until that time. Check the clock first: with a\n"
    "stale clock this lets receivers see stale timestamps. Prints the mark\n"
    "before and after. Writes: stop outbox-agent first.\n";

std::string Describe(absl::Time mark) {
  return mark == absl::InfinitePast() ? "none" : FormatRfc3339(mark);
}

absl::Status RunResetClockMark(const CommandContext& context,
                               const ParsedArgs& args) {
  if (!args.positional.empty()) {
    return UsageError("reset-clock-mark takes no arguments");
  }
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForWriting(context.db));
  const absl::Time before = store->WallClockMark();
  absl::Status reset = store->ResetWallClockMark();
  const absl::Time after = store->WallClockMark();
  absl::Status closed = CloseStore(std::move(store));
  OUTBOX_RETURN_IF_ERROR(reset);
  OUTBOX_RETURN_IF_ERROR(closed);
  Write(context.out, absl::StrCat("clock mark was ", Describe(before), ", now ",
                                  Describe(after), "\n"));
  return absl::OkStatus();
}

}  // namespace

const Command& ResetClockMarkCommand() {
  static const Command* const command =
      new Command{"reset-clock-mark",
                  "set the store's clock mark back to this machine's time",
                  kClockMarkUsage,
                  {},
                  RunResetClockMark};
  return *command;
}

}  // namespace outbox::ctl
