// Copyright (c) edge-outbox authors.
//
// outboxctl verify: reads the whole store and reports what disagrees.

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/store_access.h"

namespace outbox::ctl {
namespace {

constexpr char kVerifyUsage[] =
    "usage: outboxctl --db DIR verify\n"
    "\n"
    "Reads every entry, counter and index of the store and reports what\n"
    "disagrees: queue counters that are not what the entries add up to,\n"
    "entries outside the queue's bounds, values that do not decode, an event\n"
    "both pending and dead, idempotency keys and their expiry index without\n"
    "each other, workflow result rows without a workflow, running workflows\n"
    "whose event is not pending, finished ones missing from the retention\n"
    "index. Also lists the on-disk features the store records. Read-only\n"
    "(works while outbox-agent runs, on the store as of the open) and\n"
    "writes nothing. Exits 0 when the store is sound, 1 when anything\n"
    "disagrees (each problem on a line of its own) or cannot be read.\n";

std::string Report(const VerifyReport& r) {
  std::string text;
  absl::StrAppendFormat(&text, "%-18s %d\n",
                        "pending entries:", r.pending_entries);
  absl::StrAppendFormat(&text, "%-18s %d\n", "dead letters:", r.dead_letters);
  absl::StrAppendFormat(&text, "%-18s %d\n",
                        "idempotency keys:", r.idempotency_keys);
  absl::StrAppendFormat(&text, "%-18s %d (%d result rows)\n",
                        "workflows:", r.workflows, r.workflow_rows);
  for (const std::string& f : r.features) {
    absl::StrAppendFormat(&text, "%-18s %s\n", "feature:", f);
  }
  if (r.features.empty())
    absl::StrAppendFormat(&text, "%-18s none\n", "features:");
  for (const std::string& p : r.problems) {
    absl::StrAppendFormat(&text, "%-18s %s\n", "problem:", p);
  }
  absl::StrAppendFormat(&text, "%-18s %s\n", "verdict:",
                        r.problems.empty()
                            ? std::string("sound")
                            : absl::StrCat(r.problems.size(), " problem(s)"));
  return text;
}

absl::Status RunVerify(const CommandContext& context, const ParsedArgs& args) {
  if (!args.positional.empty()) {
    return UsageError("verify takes no arguments");
  }
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForReading(context.db));
  OUTBOX_ASSIGN_OR_RETURN(const VerifyReport report, store->Verify());
  Write(context.out, Report(report));
  if (report.problems.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "store '", context.db, "' has ", report.problems.size(),
      " problem(s) (listed above); docs/operations.md says what to do"));
}

}  // namespace

const Command& VerifyCommand() {
  static const Command* const command =
      new Command{"verify",
                  "check every entry, counter and index (read-only)",
                  kVerifyUsage,
                  {},
                  RunVerify};
  return *command;
}

}  // namespace outbox::ctl
