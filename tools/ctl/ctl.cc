// Copyright (c) edge-outbox authors.

#include "tools/ctl/ctl.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/ctl/command.h"
#include "tools/ctl/text.h"

namespace outbox::ctl {
namespace {

std::string GlobalUsage() {
  std::string text =
      "usage: outboxctl --db DIR COMMAND [flags]\n"
      "       outboxctl COMMAND --help\n"
      "\n"
      "The operator's tool for an edge-outbox store.\n"
      "\n"
      "commands:\n";
  int width = 0;
  for (const Command* c : AllCommands()) {
    width = std::max(width, static_cast<int>(std::strlen(c->name)));
  }
  for (const Command* c : AllCommands()) {
    absl::StrAppendFormat(&text, "  %-*s %s\n", width, c->name, c->summary);
  }
  text +=
      "\n"
      "Read-only commands (stats, list, show, get) work while outbox-agent\n"
      "runs. The others write and need the store to themselves: stop the\n"
      "agent first.\n"
      "\n"
      "  --db DIR   the store's directory (before or after COMMAND)\n"
      "\n"
      "Exit status: 0 ok; 1 the operation failed (reason on stderr); 2 the\n"
      "command line was wrong.\n";
  return text;
}

const Command* FindCommand(absl::string_view name) {
  for (const Command* c : AllCommands()) {
    if (name == c->name) return c;
  }
  return nullptr;
}

// Messages can quote store contents; keep them from driving the terminal.
std::string Printable(absl::string_view message) {
  return IsSafeForTerminal(message, /*allow_newlines=*/false)
             ? std::string(message)
             : Quote(message);
}

int Usage(std::FILE* err, absl::string_view message, absl::string_view usage) {
  absl::FPrintF(err, "outboxctl: %s\n\n%s", Printable(message), usage);
  return kExitUsage;
}

// Runs `command` with the arguments after its name.
int RunCommand(const Command& command, std::string db,
               std::vector<std::string> args, std::FILE* out, std::FILE* err) {
  for (std::string& a : args) {
    if (a == "-h") a = "--help";
  }
  std::vector<FlagSpec> specs = command.flags;
  specs.push_back({"db", true});
  specs.push_back({"help", false});
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, specs);
  if (!parsed.ok()) return Usage(err, parsed.status().message(), command.usage);
  if (parsed->Has("help")) {
    absl::FPrintF(out, "%s", command.usage);
    return kExitOk;
  }
  if (parsed->Has("db")) {
    if (!db.empty()) return Usage(err, "--db is given twice", command.usage);
    db = parsed->Value("db");
  }
  if (db.empty()) return Usage(err, "--db DIR is required", command.usage);

  const absl::Status status = command.run(CommandContext{db, out}, *parsed);
  if (IsUsageError(status)) return Usage(err, status.message(), command.usage);
  if (std::fflush(out) != 0 || std::ferror(out)) {
    absl::FPrintF(err, "outboxctl: UNAVAILABLE: cannot write to stdout\n");
    return kExitFailed;
  }
  if (!status.ok()) {
    absl::FPrintF(err, "outboxctl: %s: %s\n",
                  absl::StatusCodeToString(status.code()),
                  Printable(status.message()));
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

int RunCtl(const std::vector<std::string>& args, std::FILE* out,
           std::FILE* err) {
  std::string db;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      absl::FPrintF(out, "%s", GlobalUsage());
      return kExitOk;
    }
    if (a == "--db" || absl::StartsWith(a, "--db=")) {
      if (!db.empty()) return Usage(err, "--db is given twice", GlobalUsage());
      if (a != "--db") {
        db = a.substr(5);
      } else if (i + 1 < args.size() && !absl::StartsWith(args[i + 1], "--")) {
        db = args[++i];
      }
      if (db.empty()) return Usage(err, "--db needs a value", GlobalUsage());
      continue;
    }
    if (absl::StartsWith(a, "-")) {
      return Usage(err, absl::StrCat("unknown flag '", a, "' before COMMAND"),
                   GlobalUsage());
    }
    if (a == "help") {
      const Command* c =
          i + 1 < args.size() ? FindCommand(args[i + 1]) : nullptr;
      absl::FPrintF(out, "%s", c != nullptr ? c->usage : GlobalUsage());
      return kExitOk;
    }
    const Command* command = FindCommand(a);
    if (command == nullptr) {
      return Usage(err, absl::StrCat("unknown command '", a, "'"),
                   GlobalUsage());
    }
    return RunCommand(
        *command, db,
        std::vector<std::string>(args.begin() + i + 1, args.end()), out, err);
  }
  return Usage(err, "no command given", GlobalUsage());
}

}  // namespace outbox::ctl
