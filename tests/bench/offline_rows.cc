// Copyright (c) edge-outbox authors.
//
// Offline: the destination is unreachable (nothing listens on the discard
// port) while the agent runs. With N pending against an empty store: the
// agent's CPU while idle, and what a commit costs the committing thread
// while the agent runs (commits paced at 50/s, as outbox-pos-sim --rate 50).
// Once more with N pending for a batching destination (batches of 100),
// whose wake-ups read an event's followers to fill a batch.

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "tests/bench/bench_agent.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_sections.h"

namespace outbox::bench {
namespace {

constexpr char kUnreachableUrl[] = "http://127.0.0.1:9/hook";
constexpr double kCommitsPerSecond = 50;

struct OfflineFigures {
  double idle_cpu_per_10s = 0;  // seconds, the agent's thread
  double commit_cpu_us = 0;     // the committing thread, per commit
  Latencies commit_latency;
  int commits = 0;
  double commit_seconds = 0;
  double agent_cpu_while_committing = 0;  // seconds
};

absl::Status PacedCommits(Store& store, const Scale& scale,
                          const BackgroundAgent& agent, OfflineFigures* f) {
  const absl::Duration agent_cpu = agent.Cpu();
  const absl::Duration own_cpu = ThreadCpu();
  const absl::Duration cap = absl::Seconds(scale.offline_seconds);
  Stopwatch wall;
  for (int i = 0; i < scale.offline_commits && wall.Elapsed() < cap; ++i) {
    const absl::Duration at = absl::Seconds(i / kCommitsPerSecond);
    if (at > wall.Elapsed()) absl::SleepFor(at - wall.Elapsed());
    Stopwatch one;
    OUTBOX_RETURN_IF_ERROR(CommitSale(store, /*producer=*/4, i));
    f->commit_latency.Add(one.Elapsed());
    ++f->commits;
  }
  f->commit_seconds = absl::ToDoubleSeconds(wall.Elapsed());
  f->commit_cpu_us = absl::ToDoubleMicroseconds(ThreadCpu() - own_cpu) /
                     std::max(f->commits, 1);
  f->agent_cpu_while_committing =
      absl::ToDoubleSeconds(agent.Cpu() - agent_cpu);
  return absl::OkStatus();
}

// Runs the agent offline over the store at `path`. With a `backlog` it
// first waits until the agent has found the destination unreachable; an
// empty store gives it nothing to send, so nothing to find out.
// `batch`: what goes in the destination's batch block; "" for none.
absl::StatusOr<OfflineFigures> MeasureOffline(const std::string& path,
                                              bool backlog,
                                              const std::string& batch,
                                              const Scale& scale) {
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/true));
  OUTBOX_ASSIGN_OR_RETURN(
      std::unique_ptr<BackgroundAgent> agent,
      BackgroundAgent::Start(store.get(),
                             AgentConfig(kUnreachableUrl, "", 8, batch)));
  if (backlog) {
    OUTBOX_RETURN_IF_ERROR(agent->WaitOffline(absl::Seconds(60)));
  } else {
    absl::SleepFor(absl::Seconds(1));  // settle
  }
  OfflineFigures f;
  const absl::Duration idle_cpu = agent->Cpu();
  absl::SleepFor(absl::Seconds(scale.idle_seconds));
  f.idle_cpu_per_10s = absl::ToDoubleSeconds(agent->Cpu() - idle_cpu) * 10 /
                       std::max(scale.idle_seconds, 1);
  OUTBOX_RETURN_IF_ERROR(PacedCommits(*store, scale, *agent, &f));
  OUTBOX_RETURN_IF_ERROR(agent->Stop());
  OUTBOX_RETURN_IF_ERROR(store->Close());
  return f;
}

void AddRows(const std::string& key, const std::string& label,
             OfflineFigures& f, const Scale& scale, bool baseline,
             Table* table) {
  auto vs = [&](const char* what) -> std::vector<Ratio> {
    if (baseline) return {};
    return {Vs(absl::StrCat("offline.empty.", what))};
  };
  table->Add(Row{
      key + ".commit_cpu",
      "offline, " + label + ": Commit CPU per commit, agent running",
      f.commit_cpu_us, "us",
      absl::StrFormat("%d of %d commits at 50/s in %s s; latency p50 %s ms, "
                      "p99 %s ms; agent CPU meanwhile %s s",
                      f.commits, scale.offline_commits,
                      FormatFigure(f.commit_seconds),
                      FormatFigure(f.commit_latency.Percentile(50) / 1000),
                      FormatFigure(f.commit_latency.Percentile(99) / 1000),
                      FormatFigure(f.agent_cpu_while_committing)),
      vs("commit_cpu")});
  table->Add(Row{key + ".commit_rate",
                 "offline, " + label + ": commits done, 50/s asked",
                 f.commits / std::max(f.commit_seconds, 1e-9), "/s",
                 "paced commits while the agent runs", vs("commit_rate")});
  table->Add(Row{key + ".idle_cpu",
                 "offline, " + label + ": agent CPU per 10 s idle",
                 f.idle_cpu_per_10s, "s",
                 absl::StrCat("measured over ", scale.idle_seconds, " s",
                              baseline ? " (nothing to send)"
                                       : " after the first failed request"),
                 vs("idle_cpu")});
}

}  // namespace

absl::Status RunOfflineRows(const Scale& scale, const std::string& dir,
                            Table* table) {
  const std::string empty = dir + "/offline-empty";
  OUTBOX_ASSIGN_OR_RETURN(OfflineFigures none,
                          MeasureOffline(empty, false, "", scale));
  OUTBOX_ASSIGN_OR_RETURN(std::string pending, PendingStore(dir, scale.events));
  OUTBOX_ASSIGN_OR_RETURN(OfflineFigures full,
                          MeasureOffline(pending, true, "", scale));
  const std::string batched = dir + "/offline-batched";
  OUTBOX_RETURN_IF_ERROR(FillStore(batched, scale.events));
  OUTBOX_ASSIGN_OR_RETURN(
      OfflineFigures full_batched,
      MeasureOffline(batched, true, "max_events: 100", scale));
  AddRows("offline.empty", "empty store", none, scale, true, table);
  AddRows("offline.full", absl::StrCat(scale.events, " pending"), full, scale,
          false, table);
  AddRows("offline.full_batched",
          absl::StrCat(scale.events, " pending, batches of 100"), full_batched,
          scale, false, table);
  return absl::OkStatus();
}

}  // namespace outbox::bench
