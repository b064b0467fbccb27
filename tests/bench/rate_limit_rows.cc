// Copyright (c) edge-outbox authors.
//
// A destination's rate limit while a backlog waits (issue 27, item 5: the
// agent stays one thread and its CPU stays flat while it waits). The agent
// runs on a thread of its own against the real outbox-sink, with
// `rate_limit { events_per_second: 20 }`, over 1,000 pending events and
// over N: what it delivers per second, and its thread's CPU per 10 s and per
// delivered event, N against 1,000. Each refill wakes the agent once; what
// it costs must not grow with the events that wait.

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

constexpr int kEventsPerSecond = 20;
constexpr int kSmallBacklog = 1000;

struct Limited {
  double seconds = 0;
  uint64_t delivered = 0;
  double cpu_seconds = 0;  // the agent's thread
};

absl::StatusOr<uint64_t> Pending(Store& store) {
  OUTBOX_ASSIGN_OR_RETURN(Stats stats, store.GetStats());
  return stats.pending_events;
}

// The agent over `n` pending events for `scale.idle_seconds`, after its
// first second (a second's worth goes at once).
absl::StatusOr<Limited> MeasureLimited(const std::string& path, int64_t n,
                                       const BenchSink& sink,
                                       const Scale& scale) {
  OUTBOX_RETURN_IF_ERROR(FillStore(path, n));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/true));
  OUTBOX_ASSIGN_OR_RETURN(
      std::unique_ptr<BackgroundAgent> agent,
      BackgroundAgent::Start(
          store.get(),
          AgentConfig(sink.url(), sink.secrets_file(), 8, "", "",
                      absl::StrCat("rate_limit { events_per_second: ",
                                   kEventsPerSecond, " }"))));
  absl::SleepFor(absl::Seconds(1));
  Limited f;
  OUTBOX_ASSIGN_OR_RETURN(const uint64_t before, Pending(*store));
  const absl::Duration cpu = agent->Cpu();
  Stopwatch wall;
  absl::SleepFor(absl::Seconds(scale.idle_seconds));
  f.cpu_seconds = absl::ToDoubleSeconds(agent->Cpu() - cpu);
  f.seconds = absl::ToDoubleSeconds(wall.Elapsed());
  OUTBOX_ASSIGN_OR_RETURN(const uint64_t after, Pending(*store));
  f.delivered = before - after;
  OUTBOX_RETURN_IF_ERROR(agent->Stop());
  OUTBOX_RETURN_IF_ERROR(store->Close());
  if (f.delivered == 0) {
    return absl::InternalError(absl::StrCat("rate-limited agent over ", n,
                                            " pending delivered nothing in ",
                                            FormatFigure(f.seconds), " s"));
  }
  return f;
}

void AddRows(const std::string& key, int64_t n, const Limited& f, bool baseline,
             Table* table) {
  auto vs = [&](const char* what) -> std::vector<Ratio> {
    if (baseline) return {};
    return {Vs(absl::StrCat("ratelimit.small.", what))};
  };
  const std::string label = absl::StrCat("rate-limited to ", kEventsPerSecond,
                                         " events/s, ", n, " pending");
  table->Add(Row{key + ".rate", label + ": delivered", f.delivered / f.seconds,
                 "/s",
                 absl::StrFormat("%d events in %s s", f.delivered,
                                 FormatFigure(f.seconds)),
                 vs("rate")});
  table->Add(Row{key + ".cpu", label + ": agent CPU per 10 s",
                 f.cpu_seconds * 10 / f.seconds, "s",
                 absl::StrCat("its thread; ",
                              FormatFigure(f.cpu_seconds * 1e6 / f.delivered),
                              " us per delivered event"),
                 vs("cpu")});
}

}  // namespace

absl::Status RunRateLimitRows(const Scale& scale, const std::string& dir,
                              Table* table) {
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<BenchSink> sink,
                          BenchSink::Start(dir + "/ratelimit-sink"));
  const int64_t small = std::min<int64_t>(kSmallBacklog, scale.events);
  OUTBOX_ASSIGN_OR_RETURN(Limited few, MeasureLimited(dir + "/ratelimit-small",
                                                      small, *sink, scale));
  OUTBOX_ASSIGN_OR_RETURN(
      Limited many,
      MeasureLimited(dir + "/ratelimit-large", scale.events, *sink, scale));
  AddRows("ratelimit.small", small, few, true, table);
  AddRows("ratelimit.large", scale.events, many, false, table);
  return absl::OkStatus();
}

}  // namespace outbox::bench
