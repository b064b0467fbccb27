// Copyright (c) edge-outbox authors.
//
// outboxctl get --table T --key K: one record's value, raw.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/store_access.h"
#include "tools/ctl/text.h"

namespace outbox::ctl {
namespace {

constexpr char kGetUsage[] =
    "usage: outboxctl --db DIR get --table TABLE --key KEY\n"
    "\n"
    "Writes the value of KEY in the record table TABLE to stdout as raw\n"
    "bytes, without a newline (redirect it to a file for binary values).\n"
    "Read-only: works while outbox-agent runs.\n"
    "\n"
    "  --table T   the record table\n"
    "  --key K     the record's key\n";

absl::Status RunGet(const CommandContext& context, const ParsedArgs& args) {
  if (!args.positional.empty()) {
    return UsageError("get takes no arguments besides --table and --key");
  }
  OUTBOX_ASSIGN_OR_RETURN(const std::string table, RequiredFlag(args, "table"));
  OUTBOX_ASSIGN_OR_RETURN(const std::string key, RequiredFlag(args, "key"));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForReading(context.db));
  absl::StatusOr<std::string> value = store->Get(table, key);
  if (absl::IsInvalidArgument(value.status())) {
    // The library's words ("not in Options::tables") are for programmers.
    absl::StatusOr<std::vector<std::string>> tables =
        Store::ListTables(context.db);
    return absl::NotFoundError(absl::StrCat(
        "the store has no table ", Quote(table), " (its tables: ",
        tables.ok() ? absl::StrJoin(*tables, ", ") : "unknown", ")"));
  }
  if (absl::IsNotFound(value.status())) {
    return absl::NotFoundError(
        absl::StrCat("no key ", Quote(key), " in table ", Quote(table)));
  }
  if (!value.ok()) return value.status();
  Write(context.out, *value);
  return absl::OkStatus();
}

}  // namespace

const Command& GetCommand() {
  static const Command* const command =
      new Command{"get",
                  "print one record's value (raw bytes)",
                  kGetUsage,
                  {{"table", true}, {"key", true}},
                  RunGet};
  return *command;
}

}  // namespace outbox::ctl
