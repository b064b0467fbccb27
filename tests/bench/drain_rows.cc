// Copyright (c) edge-outbox authors.
//
// Delivery: the agent draining a store into the real outbox-sink over
// loopback, with 1 and 16 requests in flight and 0, 1 and 16 ordering keys,
// against the sink's own ceiling measured by a load generator in the same
// run, and the agent's CPU per delivered event.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/status_macros.h"
#include "tests/bench/bench_agent.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/sink_load.h"

namespace outbox::bench {
namespace {

constexpr int kInFlight[] = {1, 16};
constexpr int kOrderingKeys[] = {0, 1, 16};

std::string DrainDetail(const DrainFigures& f) {
  return absl::StrCat("agent CPU ", FormatFigure(f.cpu_us_per_event),
                      " us/event; ", FormatFigure(f.written_per_event),
                      " B written/event");
}

// Fills a new store at `path` with `events` sales over `keys` ordering
// keys, then drains it into `sink` with `in_flight` requests at once.
absl::StatusOr<DrainFigures> DrainNewStore(const std::string& path,
                                           const BenchSink& sink, int events,
                                           int keys, int in_flight) {
  OUTBOX_RETURN_IF_ERROR(FillStore(path, events, keys));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/true));
  OUTBOX_ASSIGN_OR_RETURN(
      DrainFigures f,
      DrainWithAgent(*store,
                     AgentConfig(sink.url(), sink.secrets_file(), in_flight),
                     events));
  OUTBOX_RETURN_IF_ERROR(store->Close());
  return f;
}

absl::Status AddCeilingRows(const BenchSink& sink, int requests, Table* table) {
  for (int in_flight : kInFlight) {
    OUTBOX_ASSIGN_OR_RETURN(
        LoadFigures load, LoadSink(sink.url(), BenchSink::kSecret, requests,
                                   in_flight, absl::StrCat("load", in_flight)));
    table->Add(Row{absl::StrCat("sink.", in_flight),
                   absl::StrCat("outbox-sink ceiling: load generator, ",
                                in_flight, " in flight"),
                   load.per_second,
                   "/s",
                   absl::StrFormat("p50 %s us, p99 %s us",
                                   FormatFigure(load.latencies.Percentile(50)),
                                   FormatFigure(load.latencies.Percentile(99))),
                   {}});
  }
  // Signed as the agent signs: the sink checked every one.
  return sink.CheckLogged(requests * static_cast<int>(std::size(kInFlight)));
}

}  // namespace

absl::Status RunDrainRows(const Scale& scale, const std::string& dir,
                          Table* table) {
  const std::string section = dir + "/drain";
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<BenchSink> sink,
                          BenchSink::Start(section));
  OUTBOX_RETURN_IF_ERROR(AddCeilingRows(*sink, scale.drain_events, table));
  for (int in_flight : kInFlight) {
    for (int keys : kOrderingKeys) {
      const std::string key = absl::StrCat("drain.", in_flight, ".", keys);
      OUTBOX_ASSIGN_OR_RETURN(
          DrainFigures f, DrainNewStore(absl::StrCat(section, "/", key), *sink,
                                        scale.drain_events, keys, in_flight));
      table->Add(Row{key,
                     absl::StrCat("drain into outbox-sink, ", in_flight,
                                  " in flight, ", keys, " ordering keys"),
                     f.per_second,
                     "/s",
                     DrainDetail(f),
                     {Vs(absl::StrCat("sink.", in_flight))}});
      if (in_flight == 16 && keys == 0) {
        table->Add(Row{"agent_cpu",
                       "agent CPU per delivered event (16 in flight, no keys)",
                       f.cpu_us_per_event,
                       "us",
                       "CLOCK_THREAD_CPUTIME_ID of the thread in Drain()",
                       {}});
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace outbox::bench
