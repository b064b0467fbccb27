// Copyright (c) edge-outbox authors.
//
// outboxctl list pending|dead: one line per event, without payloads.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/ctl/command.h"
#include "tools/ctl/event_format.h"
#include "tools/ctl/json_writer.h"
#include "tools/ctl/store_access.h"
#include "lib/status_macros.h"

namespace outbox::ctl {
namespace {

constexpr size_t kDefaultLimit = 100;
constexpr size_t kMaxLimit = 1000000;

constexpr char kUsage[] =
    "usage: outboxctl --db DIR list pending|dead [--json] [--limit N]\n"
    "\n"
    "Lists pending events in commit order, or dead letters in id order, one\n"
    "line each: id, seq, type, ordering key, destination, attempts, next\n"
    "attempt (pending) or death time and reason (dead), last error and last\n"
    "HTTP status. Payloads are not listed; `show ID` prints one. Read-only:\n"
    "works while outbox-agent runs.\n"
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
// as text lines or as the "events" array of `w`.
template <typename T, typename Format, typename ToJson>
Shown Print(const std::vector<T>& all, size_t limit, Format format,
            ToJson to_json, JsonWriter* w, std::FILE* out) {
  Shown shown;
  shown.count = std::min(all.size(), limit);
  shown.truncated = all.size() > limit;
  if (w != nullptr) w->Key("events").BeginArray();
  for (size_t i = 0; i < shown.count; ++i) {
    if (w != nullptr) {
      to_json(all[i], /*with_payload=*/false, w);
    } else {
      Write(out, format(all[i]));
    }
  }
  if (w != nullptr) w->EndArray();
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
  JsonWriter w;
  if (json) w.BeginObject().Key("state").String(pending ? "pending" : "dead");
  JsonWriter* const jw = json ? &w : nullptr;
  // Asking for one more than shown tells whether the list was cut short.
  Shown shown;
  if (pending) {
    OUTBOX_ASSIGN_OR_RETURN(std::vector<PendingEvent> events,
                            store->ListPending(limit + 1));
    shown =
        Print(events, limit, PendingLine, WritePendingJson, jw, context.out);
  } else {
    OUTBOX_ASSIGN_OR_RETURN(std::vector<DeadLetter> dead,
                            store->ListDeadLetters(limit + 1));
    shown = Print(dead, limit, DeadLine, WriteDeadJson, jw, context.out);
  }

  if (json) {
    w.Key("shown").Uint(shown.count).Key("total").Uint(total);
    w.Key("truncated").Bool(shown.truncated).EndObject();
    Write(context.out, absl::StrCat(w.str(), "\n"));
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
                  kUsage,
                  {{"json", false}, {"limit", true}},
                  RunList};
  return *command;
}

}  // namespace outbox::ctl
