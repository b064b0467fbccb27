// Copyright (c) edge-outbox authors.
//
// Batched HTTP over a slow link: one ordering key (so one request at a time,
// FIFO), into outbox-sink adding 100 ms to every answer, with one event per
// request against batches of 100 (Destination::batch). Both drains run in
// this process against the same sink and disk; the single-event drain moves
// fewer events, since at ~10 a second it would otherwise dominate the run.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/bench/bench_agent.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_rounds.h"
#include "tests/bench/bench_sections.h"

namespace outbox::bench {
namespace {

constexpr int kRounds = 5;
constexpr int kDelayMs = 100;
constexpr int kBatch = 100;

struct SlowDrain {
  std::string key, label, batch;
  int events = 0;
  std::unique_ptr<Store> store;
  std::unique_ptr<SteppedAgent> agent;
  Subject subject;
};

absl::Status Prepare(const std::string& path, const BenchSink& sink,
                     SlowDrain* d) {
  OUTBOX_RETURN_IF_ERROR(FillStore(path, d->events, /*keys=*/1));
  OUTBOX_ASSIGN_OR_RETURN(d->store, OpenBenchStore(path, /*sync=*/true));
  OUTBOX_ASSIGN_OR_RETURN(
      d->agent,
      SteppedAgent::Create(d->store.get(),
                           AgentConfig(sink.url(), sink.secrets_file(),
                                       /*max_in_flight=*/8, d->batch),
                           d->events));
  d->subject = DeliverySubject(d->agent.get());
  return absl::OkStatus();
}

}  // namespace

absl::Status RunBatchRows(const Scale& scale, const std::string& dir,
                          Table* table) {
  const std::string section = dir + "/batch";
  OUTBOX_ASSIGN_OR_RETURN(
      std::unique_ptr<BenchSink> sink,
      BenchSink::Start(section, {"--delay-ms", absl::StrCat(kDelayMs)}));
  SlowDrain single;
  single.key = "batch.1";
  single.label = "one key, 100 ms answers: 1 event per request";
  single.events = std::max(scale.drain_events / 400, kRounds);
  SlowDrain batched;
  batched.key = absl::StrCat("batch.", kBatch);
  batched.label = absl::StrCat("one key, 100 ms answers: batches of ", kBatch);
  batched.batch = absl::StrCat("max_events: ", kBatch);
  batched.events = std::max(scale.drain_events / 10, kRounds);
  for (SlowDrain* d : {&single, &batched}) {
    OUTBOX_RETURN_IF_ERROR(Prepare(section + "/" + d->key, *sink, d));
    OUTBOX_RETURN_IF_ERROR(RunRounds(kRounds, d->events, {&d->subject}));
    OUTBOX_RETURN_IF_ERROR(ExpectPending(
        *d->store, d->events - d->subject.total.ops, "drain " + d->key));
  }
  table->Add(Row{single.key,
                 single.label,
                 single.subject.total.per_second(),
                 "/s",
                 absl::StrCat(single.agent->delivered(), " events in ",
                              single.agent->requests(), " requests"),
                 {}});
  table->Add(Row{batched.key,
                 batched.label,
                 batched.subject.total.per_second(),
                 "/s",
                 absl::StrCat(batched.agent->delivered(), " events in ",
                              batched.agent->requests(), " requests"),
                 {Vs(single.key)}});
  return absl::OkStatus();
}

}  // namespace outbox::bench
