// Copyright (c) edge-outbox authors.
//
// A queue that has seen N events go through it, against a fresh store: the
// cost of opening it, NextDue, ListPending and a drain, with the tombstones
// RocksDB skipped for each (PerfContext). Two shapes: the queue empty after
// N deliveries, and one event stuck at the head (waiting for its retry)
// while N later ones were delivered in a shuffled order. The reads are timed
// in the churning process and again after reopening: by then a flush and
// compactions may have dropped the tombstones. The three drains run in
// rounds (bench_rounds.h), so that they meet the same disk.

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "tests/bench/bench_agent.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_rounds.h"
#include "tests/bench/bench_sections.h"

namespace outbox::bench {
namespace {

constexpr int kRound = 10000;   // sales committed, then delivered, per round
constexpr size_t kTake = 1000;  // events taken per NextDue while churning
constexpr int kNextDueCalls = 1000;
constexpr int kListCalls = 5;
constexpr int kRounds = 10;  // of the drains

struct Shape {
  std::string key;      // "fresh", "empty", "stuck"
  std::string label;    // for the table
  int64_t churned = 0;  // events committed and delivered
  bool stuck_head = false;
};

// One event at the head of the queue, due again only in a day: the head of
// a destination that keeps failing.
absl::Status StickHead(Store& store) {
  OUTBOX_RETURN_IF_ERROR(CommitSale(store, /*producer=*/1, 0));
  OUTBOX_ASSIGN_OR_RETURN(std::vector<PendingEvent> due, TakeDue(store, 1));
  if (due.empty()) return absl::InternalError("the head event is not due");
  return Retry(store, due[0], absl::Now() + absl::Hours(24));
}

// Commits `n` sales and delivers them, in rounds; each batch of due events
// is acknowledged in a shuffled order, as answers come back in any order.
absl::Status Churn(Store& store, int64_t n) {
  std::mt19937_64 rng(11);
  for (int64_t done = 0; done < n; done += kRound) {
    const int64_t round = std::min<int64_t>(kRound, n - done);
    OUTBOX_RETURN_IF_ERROR(CommitSales(store, /*producer=*/2, done, round));
    for (int64_t acked = 0; acked < round;) {
      OUTBOX_ASSIGN_OR_RETURN(std::vector<PendingEvent> due,
                              TakeDue(store, kTake));
      if (due.empty()) return absl::InternalError("churn: nothing due");
      std::shuffle(due.begin(), due.end(), rng);
      OUTBOX_RETURN_IF_ERROR(Ack(store, due));
      acked += static_cast<int64_t>(due.size());
    }
  }
  return absl::OkStatus();
}

struct Timed {
  double per_call = 0;  // ms for opens and ListPending, us for NextDue
  Skipped skipped;      // per call
};

std::string SkipDetail(const Skipped& s) {
  return absl::StrCat("tombstones skipped ", s.tombstones, " (keys ", s.keys,
                      ")");
}

// Times `calls` calls of `op` on this thread, counting RocksDB's skips.
template <typename Op>
absl::StatusOr<Timed> TimeCalls(int calls, absl::Duration unit, Op op) {
  StartCountingSkips();
  Stopwatch wall;
  for (int i = 0; i < calls; ++i) OUTBOX_RETURN_IF_ERROR(op());
  Timed t;
  t.per_call = absl::FDivDuration(wall.Elapsed(), unit) / calls;
  const Skipped total = CountedSkips();
  t.skipped = Skipped{total.tombstones / calls, total.keys / calls};
  return t;
}

// NextDue and ListPending, as the agent and outboxctl call them.
struct Reads {
  Timed next_due, list;
};

absl::StatusOr<Reads> TimeReads(Store& store) {
  Reads r;
  OUTBOX_ASSIGN_OR_RETURN(
      r.next_due, TimeCalls(kNextDueCalls, absl::Microseconds(1),
                            [&] { return TakeDue(store, 8).status(); }));
  OUTBOX_ASSIGN_OR_RETURN(
      r.list, TimeCalls(kListCalls, absl::Milliseconds(1),
                        [&] { return ListHead(store, 8).status(); }));
  return r;
}

// Builds `shape` at `path` and times the reads there and then, in the
// churning process: its deletions are still in the memtable and the newest
// table files, before a reopen and compactions clean them up.
absl::StatusOr<Reads> BuildShape(const std::string& path, const Shape& shape) {
  // Without fsync: only what is left on disk matters, not how fast.
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(path, /*sync=*/false));
  if (shape.stuck_head) OUTBOX_RETURN_IF_ERROR(StickHead(*store));
  OUTBOX_RETURN_IF_ERROR(Churn(*store, shape.churned));
  OUTBOX_RETURN_IF_ERROR(
      ExpectPending(*store, shape.stuck_head ? 1 : 0, "churn " + shape.key));
  OUTBOX_ASSIGN_OR_RETURN(Reads hot, TimeReads(*store));
  OUTBOX_RETURN_IF_ERROR(store->Close());
  return hot;
}

// One shape's store from its build to its drain.
struct ShapeRun {
  Shape shape;
  Reads hot;  // in the churning process, before any reopen
  Timed first_open, open;
  Reads reopened;
  std::unique_ptr<Store> store;
  std::unique_ptr<SteppedAgent> agent;
  Subject drain;
};

// Builds the shape, opens its store twice (the first open after the churn
// also replays its log; the second is what every later restart costs),
// times the reads again, commits `drain_events` new events and readies an
// agent to deliver them into `sink`.
absl::Status PrepareShape(const std::string& path, const BenchSink& sink,
                          int drain_events, ShapeRun* run) {
  OUTBOX_ASSIGN_OR_RETURN(run->hot, BuildShape(path, run->shape));
  auto open = [&]() -> absl::Status {
    OUTBOX_ASSIGN_OR_RETURN(run->store, OpenBenchStore(path, /*sync=*/true));
    return absl::OkStatus();
  };
  const absl::Duration ms = absl::Milliseconds(1);
  OUTBOX_ASSIGN_OR_RETURN(run->first_open, TimeCalls(1, ms, open));
  OUTBOX_RETURN_IF_ERROR(run->store->Close());
  OUTBOX_ASSIGN_OR_RETURN(run->open, TimeCalls(1, ms, open));
  OUTBOX_ASSIGN_OR_RETURN(run->reopened, TimeReads(*run->store));
  OUTBOX_RETURN_IF_ERROR(
      CommitSales(*run->store, /*producer=*/3, 0, drain_events));
  OUTBOX_ASSIGN_OR_RETURN(
      run->agent,
      SteppedAgent::Create(run->store.get(),
                           AgentConfig(sink.url(), sink.secrets_file(), 16),
                           drain_events));
  run->drain = DeliverySubject(run->agent.get());
  return absl::OkStatus();
}

void AddShapeRows(ShapeRun& f, int drain_events, Table* table) {
  const Shape& shape = f.shape;
  const std::string key = "churn." + shape.key;
  auto vs_fresh = [&](const char* what) -> std::vector<Ratio> {
    if (shape.churned == 0) return {};
    return {Vs(absl::StrCat("churn.fresh.", what))};
  };
  table->Add(Row{
      key + ".open", "Store open: " + shape.label, f.open.per_call, "ms",
      absl::StrCat(SkipDetail(f.open.skipped), "; first open after the churn ",
                   FormatFigure(f.first_open.per_call), " ms, ",
                   SkipDetail(f.first_open.skipped)),
      vs_fresh("open")});
  auto detail = [](const Timed& hot, const Timed& reopened, const char* unit) {
    return absl::StrCat(SkipDetail(hot.skipped), " per call; after reopen ",
                        FormatFigure(reopened.per_call), " ", unit, ", ",
                        SkipDetail(reopened.skipped));
  };
  table->Add(Row{key + ".next_due", "NextDue(8): " + shape.label,
                 f.hot.next_due.per_call, "us/call",
                 detail(f.hot.next_due, f.reopened.next_due, "us"),
                 vs_fresh("next_due")});
  table->Add(Row{key + ".list", "ListPending(8): " + shape.label,
                 f.hot.list.per_call, "ms/call",
                 detail(f.hot.list, f.reopened.list, "ms"), vs_fresh("list")});
  table->Add(
      Row{key + ".drain",
          absl::StrCat("drain ", drain_events,
                       " new events (16 in flight): ", shape.label),
          f.drain.total.per_second(), "/s",
          absl::StrCat(SkipDetail(f.agent->skipped()), " in all; agent CPU ",
                       FormatFigure(f.agent->cpu_us_per_event()), " us/event"),
          vs_fresh("drain")});
}

}  // namespace

absl::Status RunChurnRows(const Scale& scale, const std::string& dir,
                          Table* table) {
  const std::string section = dir + "/churn";
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<BenchSink> sink,
                          BenchSink::Start(section));
  const std::string n = absl::StrCat(scale.events);
  const Shape shapes[] = {
      {"fresh", "fresh store", 0, false},
      {"empty", "empty queue after " + n + " deliveries", scale.events, false},
      {"stuck", "1 stuck head + " + n + " delivered out of order", scale.events,
       true},
  };
  std::vector<ShapeRun> runs(std::size(shapes));
  std::vector<Subject*> drains;
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].shape = shapes[i];
    OUTBOX_RETURN_IF_ERROR(PrepareShape(section + "/" + shapes[i].key, *sink,
                                        scale.drain_events, &runs[i]));
    drains.push_back(&runs[i].drain);
  }
  OUTBOX_RETURN_IF_ERROR(RunRounds(kRounds, scale.drain_events, drains));
  for (ShapeRun& run : runs) {
    const uint64_t left = (run.shape.stuck_head ? 1 : 0) + scale.drain_events -
                          run.drain.total.ops;
    OUTBOX_RETURN_IF_ERROR(
        ExpectPending(*run.store, left, "churn drain " + run.shape.key));
    AddShapeRows(run, scale.drain_events, table);
  }
  return absl::OkStatus();
}

}  // namespace outbox::bench
