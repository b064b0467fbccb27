// Copyright (c) edge-outbox authors.
//
// More in flight should never be slower (issue 27, item 7): 20,000 unkeyed
// events drained from a store into outbox-sink over loopback by
// `outbox-agent --drain-and-exit` in its own process, as the operator runs
// it, with 1, 4, 8, 16 and 32 in flight. They run in turn, kRounds times, each
// on a store of its own filled the same way, so that every setting meets
// the same moments of a shared machine; each row gives the median of its
// rounds and the spread. The agent's CPU is its process's (user + system,
// from getrusage of the reaped child), start and store open included.
// Beside each, the bare sender (sink_load.h: no store, no agent) sends the
// same number of requests with as many in flight into the same sink, in the
// same round: the receiver's own curve, for telling what more connections
// cost the receiver from what they cost the agent.

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "platform/child_process.h"
#include "tests/bench/bench_agent.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/sink_load.h"
#include "tests/testing/target_command.h"

namespace outbox::bench {
namespace {

constexpr int kRounds = 5;
constexpr int kInFlight[] = {1, 4, 8, 16, 32};

absl::Duration ChildrenCpu() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return absl::DurationFromTimeval(usage.ru_utime) +
         absl::DurationFromTimeval(usage.ru_stime);
}

struct ProcessDrain {
  std::vector<double> per_second;
  std::vector<double> bare_per_second;
  absl::Duration cpu, sink_cpu;
  int64_t events = 0;
};

// One `outbox-agent --drain-and-exit` over a fresh store of `events`.
absl::Status DrainOnce(const std::string& dir, const BenchSink& sink,
                       int events, int in_flight, ProcessDrain* d) {
  const std::string base =
      absl::StrCat(dir, "/agent-", in_flight, "-", d->per_second.size());
  OUTBOX_RETURN_IF_ERROR(FillStore(base + ".db", events));
  std::ofstream(base + ".textproto")
      << AgentConfig(sink.url(), sink.secrets_file(), in_flight);
  const absl::Duration cpu = ChildrenCpu();
  const absl::Duration sink_cpu = ProcessCpu(sink.pid());
  Stopwatch wall;
  OUTBOX_ASSIGN_OR_RETURN(
      std::unique_ptr<ChildProcess> agent,
      ChildProcess::StartToFiles(
          testing::TargetCommand(OUTBOX_AGENT_BINARY,
                                 {"--db", base + ".db", "--config",
                                  base + ".textproto", "--drain-and-exit"}),
          base + ".out", base + ".err"));
  const int code = agent->Wait(absl::Now() + absl::Minutes(10));
  const absl::Duration elapsed = wall.Elapsed();
  if (code != 0) {
    return absl::InternalError(
        absl::StrCat("outbox-agent --drain-and-exit exited with ", code,
                     "; its log: ", base, ".err"));
  }
  d->cpu += ChildrenCpu() - cpu;
  d->sink_cpu += ProcessCpu(sink.pid()) - sink_cpu;
  d->events += events;
  d->per_second.push_back(events / absl::ToDoubleSeconds(elapsed));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(base + ".db", /*sync=*/false));
  return ExpectPending(*store, 0, base);
}

// Each against 1, and against the setting before it: more must never be
// slower.
std::vector<Ratio> RatiosOf(size_t i) {
  if (i == 0) return {};
  const std::string one = absl::StrCat("process.", kInFlight[0]);
  if (i == 1) return {Vs(one)};
  return {Vs(one), Vs(absl::StrCat("process.", kInFlight[i - 1]))};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The bare sender's requests at `in_flight`, once.
absl::Status LoadOnce(const BenchSink& sink, int events, int in_flight,
                      ProcessDrain* d) {
  OUTBOX_ASSIGN_OR_RETURN(
      Throughput t, LoadSink(sink.url(), BenchSink::kSecret, events, in_flight,
                             absl::StrCat("bare-", in_flight, "-",
                                          d->bare_per_second.size())));
  d->bare_per_second.push_back(t.per_second());
  return absl::OkStatus();
}

std::string Rounds(const std::vector<double>& per_second) {
  std::vector<std::string> each;
  for (double r : per_second) each.push_back(FormatFigure(r));
  return absl::StrCat(absl::StrJoin(each, ", "), "/s");
}

}  // namespace

absl::Status RunProcessDrainRows(const Scale& scale, const std::string& dir,
                                 Table* table) {
  const std::string section = dir + "/process";
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<BenchSink> sink,
                          BenchSink::Start(section));
  std::vector<ProcessDrain> drains(std::size(kInFlight));
  for (int round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < drains.size(); ++i) {
      OUTBOX_RETURN_IF_ERROR(DrainOnce(section, *sink, scale.drain_events,
                                       kInFlight[i], &drains[i]));
      OUTBOX_RETURN_IF_ERROR(
          LoadOnce(*sink, scale.drain_events, kInFlight[i], &drains[i]));
    }
  }
  for (size_t i = 0; i < drains.size(); ++i) {
    const ProcessDrain& d = drains[i];
    table->Add(Row{
        absl::StrCat("process.", kInFlight[i]),
        absl::StrCat("outbox-agent --drain-and-exit into outbox-sink, ",
                     scale.drain_events, " unkeyed events, ", kInFlight[i],
                     " in flight (median of ", kRounds, ")"),
        Median(d.per_second), "/s",
        absl::StrCat(
            "rounds: ", Rounds(d.per_second), "; agent CPU ",
            FormatFigure(absl::ToDoubleMicroseconds(d.cpu) / d.events),
            " us/event (process); outbox-sink CPU ",
            FormatFigure(absl::ToDoubleMicroseconds(d.sink_cpu) / d.events),
            " us/event; bare sender ", FormatFigure(Median(d.bare_per_second)),
            "/s (", Rounds(d.bare_per_second), ")"),
        RatiosOf(i)});
  }
  return absl::OkStatus();
}

}  // namespace outbox::bench
