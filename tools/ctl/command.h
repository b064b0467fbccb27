// Copyright (c) edge-outbox authors.
//
// The shape of one outboxctl command, and the table of all of them. Each
// command lives in its own cmd_*.cc file next to its usage text.

#ifndef OUTBOX_TOOLS_CTL_COMMAND_H_
#define OUTBOX_TOOLS_CTL_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tools/ctl/args.h"

namespace outbox::ctl {

// What a command runs with.
struct CommandContext {
  std::string db;  // --db, never empty
  std::FILE* out;  // stdout: results only; errors go back as a Status
};

// One command. Plain data; every Command is a static constant.
struct Command {
  const char* name;
  // One line for `outboxctl --help`.
  const char* summary;
  // The full `outboxctl <name> --help` text, from "usage:" on.
  const char* usage;
  // Flags besides --db and --help, which every command takes.
  std::vector<FlagSpec> flags;
  // Runs the command. A UsageError makes the tool print `usage` and exit 2;
  // any other error exits 1. What it printed to `out` before failing stays
  // (e.g. the dead letters a partial `replay --all` did replay).
  absl::Status (*run)(const CommandContext& context, const ParsedArgs& args);
};

const Command& StatsCommand();
const Command& ListCommand();
const Command& ShowCommand();
const Command& ReplayCommand();
const Command& RetryStepCommand();
const Command& CancelCommand();
const Command& PurgeDeadCommand();
const Command& ResetClockMarkCommand();
const Command& GetCommand();
const Command& EmitCommand();
const Command& VerifyCommand();

// Every command, in the order `--help` lists them.
std::vector<const Command*> AllCommands();

// Writes `text` to `out` as is (it may hold any bytes). A failed write shows
// in ferror(out), which the tool checks before exiting.
inline void Write(std::FILE* out, absl::string_view text) {
  std::fwrite(text.data(), 1, text.size(), out);
}

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_COMMAND_H_
