// Copyright (c) edge-outbox authors.
//
// Time to drain (issue 27, item 6): a day of one till, 100,000 pending
// sales with the demo's payloads, drained by the agent into outbox-sink
// through an emulated cellular link: 2 Mbit/s each way (tc tbf), a 100 ms
// round trip and 1% of the answers lost to a connection reset (LinkRelay),
// all inside a private network namespace (cellular_link.h). Rows: one event
// per request, batches of 50 uncompressed, gzip and zstd, each with 1 and
// 16 in flight; then zstd with the demo's key (FIFO per till), and a stream
// of refunds committed behind the backlog with its commit-to-2xx latency.
// Each row gives events/s against the link's own ceiling (its byte rate
// over the bytes the uplink carried per event) and against one event per
// request; the rows too slow for the whole backlog drain fewer events and
// say so. Runs only as root (a network namespace and tc need
// CAP_SYS_ADMIN); otherwise one row says why it did not.

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/cellular_drain.h"
#include "tests/bench/cellular_link.h"

namespace outbox::bench {
namespace {

constexpr int64_t kLinkBitsPerSecond = 2'000'000;
constexpr char kSingle[] = "cell.single.1";  // the "one event per request"
constexpr int kRefunds = 1000;

struct RowSpec {
  std::string key, label;
  DrainSpec drain;
};

RowSpec Spec(const std::string& coding, int in_flight, int events) {
  RowSpec r;
  const std::string what = coding.empty()
                               ? "one event per request"
                               : absl::StrCat("batches of ", kBatchEvents,
                                              coding == "none" ? "" : " + ",
                                              coding == "none" ? "" : coding);
  r.key =
      absl::StrCat("cell.", coding.empty() ? "single" : coding, ".", in_flight);
  r.label = absl::StrCat(what, ", ", in_flight, " in flight");
  r.drain.coding = coding;
  r.drain.in_flight = in_flight;
  r.drain.events = events;
  return r;
}

// The rows in the order they run: the baseline first. One event per request
// at a 100 ms round trip moves ~10 events/s with 1 in flight (100,000 would
// take ~3 h) and ~160/s with 16: those rows drain a hundredth and a tenth.
std::vector<RowSpec> Rows(int n) {
  std::vector<RowSpec> rows;
  for (int in_flight : {1, 16}) {
    rows.push_back(
        Spec("", in_flight, std::max(n / (in_flight == 1 ? 100 : 10), 20)));
    for (const char* coding : {"none", "gzip", "zstd"}) {
      rows.push_back(Spec(coding, in_flight, n));
    }
  }
  RowSpec keyed = Spec("zstd", 16, std::max(n / 10, 100));
  keyed.key = "cell.zstd.16.keyed";
  keyed.label += ", the demo's key (FIFO per till: one request at a time)";
  keyed.drain.keyed_by_till = true;
  rows.push_back(keyed);
  // Refunds committed behind the backlog: of no class (FIFO across types),
  // then of a fiscal class of priority 9.
  RowSpec refunds = Spec("zstd", 16, n);
  refunds.key = "cell.refunds";
  refunds.drain.trailing.count = std::max(std::min(kRefunds, n / 10), 10);
  refunds.label = absl::StrCat(
      refunds.drain.trailing.count,
      " refunds committed behind the backlog (zstd, 16 in flight; no "
      "priority: FIFO across types)");
  rows.push_back(refunds);
  RowSpec first = refunds;
  first.key = "cell.refunds.priority9";
  first.drain.store_options = [](Options* options) {
    EventClass refund;
    refund.name = "refunds";
    refund.event_types = {"refund.*"};
    refund.priority = 9;
    refund.fiscal = true;
    options->event_classes.push_back(refund);
  };
  first.label = absl::StrCat(first.drain.trailing.count,
                             " refunds of priority 9 committed behind the "
                             "backlog (zstd, 16 in flight)");
  rows.push_back(first);
  return rows;
}

// REQUIRES: f.delivered > 0. Sorts f's latencies.
std::string Detail(const RowSpec& spec, DrainFigures& f, int full) {
  const double minutes = absl::ToDoubleMinutes(f.elapsed);
  std::string d =
      absl::StrFormat("%d events in %.2f min", f.delivered, minutes);
  if (spec.drain.events < full) {
    absl::StrAppendFormat(
        &d, " (fewer events: %d at this rate would take %.0f min)", full,
        full / f.per_second() / 60);
  }
  absl::StrAppendFormat(
      &d,
      "; wire %s B/event up + %s down (IP, through tbf), HTTP %s B/event; "
      "agent CPU %s us/event; %d requests over %d connections, %d resets, "
      "%d repeats at the sink",
      FormatFigure(static_cast<double>(f.up.bytes) / f.delivered),
      FormatFigure(static_cast<double>(f.down.bytes) / f.delivered),
      FormatFigure(static_cast<double>(f.http_bytes) / f.delivered),
      FormatFigure(f.cpu_us_per_event), f.requests, f.connections, f.resets,
      f.duplicates);
  if (f.up.dropped + f.down.dropped > 0) {
    absl::StrAppendFormat(&d, "; tbf dropped %d packets",
                          f.up.dropped + f.down.dropped);
  }
  if (std::isinf(f.eta_seconds)) {
    absl::StrAppend(&d, "; no ETA at 1/4 yet (no rate in the metrics file)");
  } else if (f.eta_seconds >= 0) {
    absl::StrAppendFormat(&d, "; ETA at 1/4: %.1f s, took %.1f s",
                          f.eta_seconds, absl::ToDoubleSeconds(f.rest));
  }
  if (f.trailing.size() > 0) {
    absl::StrAppendFormat(&d, "; %d trailing events: p50 %.2f s, p99 %.2f s",
                          f.trailing.size(), f.trailing.Percentile(50) / 1e6,
                          f.trailing.Percentile(99) / 1e6);
  }
  return d;
}

void AddRow(const RowSpec& spec, DrainFigures& f, int full, bool single_ran,
            Table* table) {
  const double up_per_event = static_cast<double>(f.up.bytes) / f.delivered;
  const std::string ceiling = spec.key + ".ceiling";
  table->AddFigure(ceiling, "the link's ceiling",
                   kLinkBitsPerSecond / 8.0 / up_per_event);
  std::vector<Ratio> ratios = {Vs(ceiling)};
  if (spec.key != kSingle && single_ran) ratios.push_back(Vs(kSingle));
  table->Add(Row{spec.key, spec.label, f.per_second(), "/s",
                 Detail(spec, f, full), ratios});
}

absl::Status RunOnLink(const Scale& scale, const std::string& dir,
                       Table* table) {
  absl::StatusOr<std::unique_ptr<CellularLink>> link =
      CellularLink::Enter(kLinkBitsPerSecond, dir);
  if (absl::IsPermissionDenied(link.status()) ||
      absl::IsNotFound(link.status())) {
    table->Add(Row{"cell.not_run",
                   "time to drain over a cellular link",
                   0,
                   "",
                   absl::StrCat("not run: ", link.status().message()),
                   {}});
    return absl::OkStatus();
  }
  OUTBOX_RETURN_IF_ERROR(link.status());
  const int full = scale.cellular_events;
  // OUTBOX_BENCH_CELLULAR_ROWS=cell.refunds runs only the rows whose key
  // starts so (their ratios to rows not run are left out).
  const char* only = std::getenv("OUTBOX_BENCH_CELLULAR_ROWS");
  for (const RowSpec& spec : Rows(full)) {
    if (only != nullptr && !absl::StartsWith(spec.key, only)) continue;
    OUTBOX_ASSIGN_OR_RETURN(
        DrainFigures f,
        RunCellularDrain(spec.drain, link->get(), dir + "/" + spec.key));
    AddRow(spec, f, full, only == nullptr, table);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunDrainTimeRows(const Scale& scale, const std::string& dir,
                              Table* table) {
  // The namespace is this thread's alone: the rest of outbox_bench stays
  // on the host's network.
  absl::Status status;
  std::thread on_link(
      [&] { status = RunOnLink(scale, dir + "/cellular", table); });
  on_link.join();
  return status;
}

}  // namespace outbox::bench
