// Copyright (c) edge-outbox authors.
//
// Delivery: the agent draining a store into the real outbox-sink over
// loopback, with 1, 8 and 16 requests in flight and 0, 1 and 16 ordering keys,
// against a bare sender into the same sink (a load generator with no store
// behind it, the same requests and as many in flight), and the
// agent's CPU per delivered event. The nine drains and the three load
// generators run in rounds (bench_rounds.h), so that all meet the same disk.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "tests/bench/bench_agent.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_rounds.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/sink_load.h"

namespace outbox::bench {
namespace {

constexpr int kRounds = 10;
// 8 as well as 16: more in flight must never be slower (issue 27, item 7;
// the 16 in flight rows give their ratio to the 8 in flight ones).
constexpr int kInFlight[] = {1, 8, 16};
constexpr int kOrderingKeys[] = {0, 1, 16};
constexpr char kLoadPrefix[] = "load";

// One drain row: a store filled with the row's events and its agent.
struct Drain {
  int in_flight = 0, keys = 0;
  std::unique_ptr<Store> store;
  std::unique_ptr<SteppedAgent> agent;
  Subject subject;
};

absl::Status PrepareDrain(const std::string& path, const BenchSink& sink,
                          int events, Drain* d) {
  OUTBOX_RETURN_IF_ERROR(FillStore(path, events, d->keys));
  OUTBOX_ASSIGN_OR_RETURN(d->store, OpenBenchStore(path, /*sync=*/true));
  OUTBOX_ASSIGN_OR_RETURN(
      d->agent,
      SteppedAgent::Create(
          d->store.get(),
          AgentConfig(sink.url(), sink.secrets_file(), d->in_flight), events));
  d->subject = DeliverySubject(d->agent.get());
  return absl::OkStatus();
}

Subject LoadSubject(const BenchSink& sink, int in_flight) {
  const std::string url = sink.url();
  return Subject([url, in_flight](int64_t first, int count) {
    return LoadSink(url, BenchSink::kSecret, count, in_flight,
                    absl::StrCat(kLoadPrefix, in_flight, "-", first));
  });
}

std::string DrainKey(const Drain& d) {
  return absl::StrCat("drain.", d.in_flight, ".", d.keys);
}

void AddRows(std::vector<Subject>& loads, std::vector<Drain>& drains,
             Table* table) {
  for (size_t i = 0; i < loads.size(); ++i) {
    Throughput& t = loads[i].total;
    table->Add(Row{absl::StrCat("sink.", kInFlight[i]),
                   absl::StrCat("bare sender into outbox-sink (load generator, "
                                "no store), ",
                                kInFlight[i], " in flight"),
                   t.per_second(),
                   "/s",
                   absl::StrFormat("p50 %s us, p99 %s us",
                                   FormatFigure(t.latencies.Percentile(50)),
                                   FormatFigure(t.latencies.Percentile(99))),
                   {}});
  }
  for (Drain& d : drains) {
    table->Add(Row{
        DrainKey(d),
        absl::StrCat("drain into outbox-sink, ", d.in_flight, " in flight, ",
                     d.keys, " ordering keys"),
        d.subject.total.per_second(),
        "/s",
        absl::StrCat("agent CPU ", FormatFigure(d.agent->cpu_us_per_event()),
                     " us/event; ", FormatFigure(d.agent->written_per_event()),
                     " B written/event"),
        d.in_flight == 16
            ? std::vector<Ratio>{Vs(absl::StrCat("sink.", d.in_flight)),
                                 Vs(absl::StrCat("drain.8.", d.keys))}
            : std::vector<Ratio>{Vs(absl::StrCat("sink.", d.in_flight))}});
    if (d.in_flight == 16 && d.keys == 0) {
      table->Add(Row{"agent_cpu",
                     "agent CPU per delivered event (16 in flight, no keys)",
                     d.agent->cpu_us_per_event(),
                     "us",
                     "CLOCK_THREAD_CPUTIME_ID of the thread in RunOnce()",
                     {}});
    }
  }
}

}  // namespace

absl::Status RunDrainRows(const Scale& scale, const std::string& dir,
                          Table* table) {
  const std::string section = dir + "/drain";
  const int events = scale.drain_events;
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<BenchSink> sink,
                          BenchSink::Start(section));
  std::vector<Subject> loads;
  for (int in_flight : kInFlight)
    loads.push_back(LoadSubject(*sink, in_flight));
  std::vector<Drain> drains(std::size(kInFlight) * std::size(kOrderingKeys));
  for (size_t i = 0; i < drains.size(); ++i) {
    Drain& d = drains[i];
    d.in_flight = kInFlight[i / std::size(kOrderingKeys)];
    d.keys = kOrderingKeys[i % std::size(kOrderingKeys)];
    OUTBOX_RETURN_IF_ERROR(
        PrepareDrain(section + "/" + DrainKey(d), *sink, events, &d));
  }
  std::vector<Subject*> subjects;
  for (Subject& s : loads) subjects.push_back(&s);
  for (Drain& d : drains) subjects.push_back(&d.subject);
  OUTBOX_RETURN_IF_ERROR(RunRounds(kRounds, events, subjects));

  // Signed as the agent signs: the sink checked every request.
  OUTBOX_RETURN_IF_ERROR(sink->CheckLogged(
      kLoadPrefix, static_cast<int>(loads[0].total.ops * loads.size())));
  for (Drain& d : drains) {
    OUTBOX_RETURN_IF_ERROR(ExpectPending(*d.store, events - d.subject.total.ops,
                                         "drain " + DrainKey(d)));
  }
  AddRows(loads, drains, table);
  return absl::OkStatus();
}

}  // namespace outbox::bench
