// Copyright (c) edge-outbox authors.
//
// outboxctl list pending|dead: one line per event, without payloads.

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/event_format.h"
#include "tools/ctl/store_access.h"
#include "tools/json_bytes.h"

namespace outbox::ctl {
namespace {

constexpr size_t kDefaultLimit = 100;
constexpr size_t kMaxLimit = 1000000;

constexpr char kListUsage[] =
    "usage: outboxctl --db DIR list pending|dead [--json] [--limit N]\n"
    "\n"
    "Lists pending events in commit order, or dead letters in id order, one\n"
    "line each: id, seq, type, ordering key, destination, attempts, next\n"
    "attempt (pending) or death time and reason (dead), last error (what\n"
    "the receiver or broker answered, or why no answer came) and, after an\n"
    "HTTP answer, its status. Payloads are not listed; `show ID` prints\n"
    "one. Read-only: works while outbox-agent runs.\n"
    "\n"
    "  --json      one JSON object {\"state\", \"events\": [...], \"shown\",\n"
    "              \"total\", \"truncated\"} instead of text\n"
    "  --limit N   list at most N events (default 100); says when more exist\n";

// What the list shows: the events, and whether there were more.
struct Shown {
  size_t count = 0;
  bool truncated = false;
};

// Prints up to `limit` of `all` (which holds limit + 1 when there are more)
// as text lines, or appends them to the array `events` when it is not null.
template <typename T, typename Format, typename ToJson>
Shown Print(const std::vector<T>& all, size_t limit, Format format,
            ToJson to_json, nlohmann::ordered_json* events, std::FILE* out) {
  Shown shown;
  shown.count = std::min(all.size(), limit);
  shown.truncated = all.size() > limit;
  for (size_t i = 0; i < shown.count; ++i) {
    if (events != nullptr) {
      events->push_back(to_json(all[i], /*with_payload=*/false));
    } else {
      Write(out, format(all[i]));
    }
  }
  return shown;
}

absl::Status RunList(const CommandContext& context, const ParsedArgs& args) {
  if (args.positional.size() != 1 ||
      (args.positional[0] != "pending" && args.positional[0] != "dead")) {
    return UsageError("list needs one argument: pending or dead");
  }
  const bool pending = args.positional[0] == "pending";
  size_t limit = kDefaultLimit;
  if (args.Has("limit")) {
    OUTBOX_ASSIGN_OR_RETURN(
        limit, ParseCount("limit", args.Value("limit"), kMaxLimit));
  }
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForReading(context.db));
  OUTBOX_ASSIGN_OR_RETURN(Stats stats, store->GetStats());
  const uint64_t total = pending ? stats.pending_events : stats.dead_letters;
  const char* noun = pending ? "pending events" : "dead letters";

  const bool json = args.Has("json");
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  nlohmann::ordered_json* const json_events = json ? &events : nullptr;
  // Asking for one more than shown tells whether the list was cut short.
  Shown shown;
  if (pending) {
    OUTBOX_ASSIGN_OR_RETURN(std::vector<PendingEvent> all,
                            store->ListPending(limit + 1));
    shown =
        Print(all, limit, PendingLine, PendingJson, json_events, context.out);
  } else {
    OUTBOX_ASSIGN_OR_RETURN(std::vector<DeadLetter> all,
                            store->ListDeadLetters(limit + 1));
    shown = Print(all, limit, DeadLine, DeadJson, json_events, context.out);
  }

  if (json) {
    const nlohmann::ordered_json j = {{"state", pending ? "pending" : "dead"},
                                      {"events", std::move(events)},
                                      {"shown", shown.count},
                                      {"total", total},
                                      {"truncated", shown.truncated}};
    Write(context.out, absl::StrCat(DumpJson(j), "\n"));
  } else if (shown.count == 0) {
    Write(context.out, absl::StrCat("no ", noun, "\n"));
  } else if (shown.truncated) {
    Write(context.out,
          absl::StrCat("(showing the first ", shown.count, " of ", total, " ",
                       noun, "; --limit N shows more)\n"));
  }
  return absl::OkStatus();
}

}  // namespace

const Command& ListCommand() {
  static const Command* const command =
      new Command{"list",
                  "list pending events or dead letters (no payloads)",
                  kListUsage,
                  {{"json", false}, {"limit", true}},
                  RunList};
  return *command;
}

}  // namespace outbox::ctl
