// Copyright (c) edge-outbox authors.
//
// outboxctl stats: the queue's figures.

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/telemetry/prometheus_text.h"
#include "agent/telemetry/store_metrics.h"
#include "base/status_macros.h"
#include "platform/files.h"
#include "platform/private_dir.h"
#include "tools/ctl/command.h"
#include "tools/ctl/drain_eta.h"
#include "tools/ctl/event_format.h"
#include "tools/ctl/store_access.h"
#include "tools/ctl/text.h"
#include "tools/json_bytes.h"

namespace outbox::ctl {
namespace {

constexpr char kStatsUsage[] =
    "usage: outboxctl --db DIR stats [--json | --prometheus]\n"
    "                               [--agent-metrics FILE]\n"
    "\n"
    "Prints the queue's figures: pending events and their stored bytes, the\n"
    "age of the oldest pending event, dead letters, events delivered and\n"
    "dead letters purged (by the agent's dead_letter_retention or by\n"
    "purge-dead) since the store was created, workflows needing attention\n"
    "(a revert failed for good: see show and retry-step), events evicted\n"
    "and expired by their class (Options::event_classes), the size of the\n"
    "store's files, and the mode of its directory (0700: only its owner may\n"
    "enter; a store others can reach is refused). Read-only: works while\n"
    "outbox-agent runs.\n"
    "\n"
    "  --json         one JSON object instead of text\n"
    "  --prometheus   the Prometheus text format, with the names and values\n"
    "                 of the store's part of outbox-agent's metrics_file.\n"
    "                 What only a running agent knows (attempts by outcome,\n"
    "                 requests in flight, dead letters it made by reason,\n"
    "                 destination state, commit and delivery latency) is in\n"
    "                 the agent's metrics_file only.\n"
    "  --agent-metrics FILE\n"
    "                 also print each destination's drain ETA: its pending\n"
    "                 events over the rate they were delivered at in the last\n"
    "                 minute, read from FILE, the agent's metrics_file (only\n"
    "                 the running agent knows the rate), as of its last write\n"
    "                 (every metrics_interval). \"stalled\" when events wait\n"
    "                 and none moved.\n";

// The drain ETA of each destination from the agent's metrics file named by
// --agent-metrics; none without the flag.
absl::StatusOr<std::vector<DrainEta>> AgentDrainEta(const ParsedArgs& args) {
  if (!args.Has("agent-metrics")) return std::vector<DrainEta>{};
  ReadFileOptions options;
  options.what = "agent metrics file";
  OUTBOX_ASSIGN_OR_RETURN(
      const std::string text,
      ReadFileChecked(args.Value("agent-metrics"), options));
  return ParseDrainEta(text, args.Value("agent-metrics"));
}

std::string StatsJson(const Stats& stats, const std::string& mode_text,
                      absl::Time now, const std::vector<DrainEta>& etas) {
  nlohmann::ordered_json j;
  SetTime("as_of", now, &j);
  j["pending_events"] = stats.pending_events;
  j["pending_bytes"] = stats.pending_bytes;
  j["oldest_pending_age_ms"] =
      absl::ToInt64Milliseconds(stats.oldest_pending_age);
  j["dead_letters"] = stats.dead_letters;
  j["delivered_total"] = stats.delivered_total;
  j["dead_letters_purged"] = stats.dead_letters_purged;
  j["workflows_needing_attention"] = stats.workflows_needing_attention;
  j["evicted_total"] = stats.evicted_total;
  j["evicted_deleted_total"] = stats.evicted_deleted_total;
  j["expired_total"] = stats.expired_total;
  j["store_dir_mode"] = mode_text;
  j["disk_bytes"] = stats.disk_bytes;
  for (const DrainEta& eta : etas) {
    nlohmann::ordered_json e;
    e["destination"] = eta.destination;
    e["pending_events"] = eta.pending_events;
    e["events_per_second"] = eta.events_per_second;
    // null: events wait and none moved in the last minute.
    if (!std::isinf(eta.eta_seconds))
      e["eta_seconds"] = eta.eta_seconds;
    else
      e["eta_seconds"] = nullptr;
    j["drain_eta"].push_back(std::move(e));
  }
  return absl::StrCat(DumpJson(j), "\n");
}

std::string StatsText(const Stats& stats, const std::string& mode_text,
                      absl::Time now, const std::vector<DrainEta>& etas) {
  std::string text;
  absl::StrAppendFormat(&text, "%-20s %d\n",
                        "pending events:", stats.pending_events);
  absl::StrAppendFormat(&text, "%-20s %d\n",
                        "pending bytes:", stats.pending_bytes);
  absl::StrAppendFormat(
      &text, "%-20s %s\n", "oldest pending age:",
      stats.pending_events == 0
          ? std::string("-")
          : absl::FormatDuration(
                absl::Trunc(stats.oldest_pending_age, absl::Milliseconds(1))));
  absl::StrAppendFormat(&text, "%-20s %d\n",
                        "dead letters:", stats.dead_letters);
  absl::StrAppendFormat(&text, "%-20s %d\n",
                        "delivered total:", stats.delivered_total);
  absl::StrAppendFormat(&text, "%-20s %d\n",
                        "dead letters purged:", stats.dead_letters_purged);
  absl::StrAppendFormat(&text, "%-20s %d\n",
                        "needs attention:", stats.workflows_needing_attention);
  absl::StrAppendFormat(&text, "%-20s %d (%d not kept)\n",
                        "evicted total:", stats.evicted_total,
                        stats.evicted_deleted_total);
  absl::StrAppendFormat(&text, "%-20s %d\n",
                        "expired total:", stats.expired_total);
  absl::StrAppendFormat(&text, "%-20s %s\n", "store dir mode:", mode_text);
  absl::StrAppendFormat(&text, "%-20s %d\n", "disk bytes:", stats.disk_bytes);
  for (const DrainEta& eta : etas) {
    absl::StrAppendFormat(&text, "%-20s %s\n",
                          absl::StrCat("drain eta, ", eta.destination, ":"),
                          FormatDrainEta(eta));
  }
  absl::StrAppendFormat(&text, "%-20s %s\n", "as of:", FormatRfc3339(now));
  return text;
}

absl::Status RunStats(const CommandContext& context, const ParsedArgs& args) {
  if (!args.positional.empty()) {
    return UsageError("stats takes no arguments");
  }
  if (args.Has("json") && args.Has("prometheus")) {
    return UsageError("--json and --prometheus exclude each other");
  }
  if (args.Has("prometheus") && args.Has("agent-metrics")) {
    return UsageError(
        "--agent-metrics goes with text or --json: the agent's metrics file "
        "is Prometheus text already");
  }
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForReading(context.db));
  OUTBOX_ASSIGN_OR_RETURN(Stats stats, store->GetStats());
  // The open refused a directory others can reach: this shows it is 0700
  // (or 0500), or what the owner set it to.
  OUTBOX_ASSIGN_OR_RETURN(const unsigned mode, DirectoryMode(context.db));
  const std::string mode_text = absl::StrFormat("%04o", mode);
  if (args.Has("prometheus")) {
    Write(context.out, RenderPrometheusText(StoreMetricFamilies(stats)));
    return absl::OkStatus();
  }
  OUTBOX_ASSIGN_OR_RETURN(const std::vector<DrainEta> etas,
                          AgentDrainEta(args));
  const absl::Time now = absl::Now();
  Write(context.out, args.Has("json") ? StatsJson(stats, mode_text, now, etas)
                                      : StatsText(stats, mode_text, now, etas));
  return absl::OkStatus();
}

}  // namespace

const Command& StatsCommand() {
  static const Command* const command = new Command{
      "stats",
      "queue figures (pending, oldest age, dead, delivered)",
      kStatsUsage,
      {{"json", false}, {"prometheus", false}, {"agent-metrics", true}},
      RunStats};
  return *command;
}

}  // namespace outbox::ctl
