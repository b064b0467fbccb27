// Copyright (c) edge-outbox authors.

#include "tests/bench/cellular_drain.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "examples/pos_sim/pos_sim_sale.h"
#include "tests/bench/bench_agent.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/link_relay.h"
#include "tools/json_fields.h"

namespace outbox::bench {
namespace {

// The link of issue 27: a 100 ms round trip, and 1% of the answers never
// arrive (their connection is reset). The rate is the CellularLink's.
constexpr absl::Duration kRoundTrip = absl::Milliseconds(100);
constexpr double kResetProbability = 0.01;
constexpr char kEtaMetric[] = "outbox_drain_eta_seconds{destination=\"sink\"} ";

absl::StatusOr<std::unique_ptr<Store>> FillBacklog(const DrainSpec& spec,
                                                   const std::string& path) {
  Options options = BenchOptions(/*sync=*/false);
  if (spec.store_options) spec.store_options(&options);
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          Store::Open(options, path));
  pos_sim::SaleMix mix;  // plain sales, as the demo's tills commit them
  mix.keyed_by_till = spec.keyed_by_till;
  for (int n = 0; n < spec.events; ++n) {
    OUTBOX_RETURN_IF_ERROR(
        pos_sim::CommitSale(store.get(), mix, "till-1", n).status());
  }
  return store;
}

// Commits a TrailingStream from a thread of its own, and when each event
// was committed. REQUIRES: External synchronization.
class StreamCommitter {
 public:
  StreamCommitter(Store* store, const TrailingStream& stream) {
    if (stream.count > 0) {
      thread_ = std::thread([this, store, stream] { Commit(store, stream); });
    }
  }
  ~StreamCommitter() { Join().IgnoreError(); }

  // Waits for the last commit. Errors: the first failed commit's.
  absl::Status Join() {
    if (thread_.joinable()) thread_.join();
    return status_;
  }
  // Event id -> commit time. REQUIRES: Join() returned.
  const std::map<std::string, absl::Time>& committed() const {
    return committed_;
  }

 private:
  void Commit(Store* store, const TrailingStream& stream) {
    for (int n = 0; n < stream.count && status_.ok(); ++n) {
      absl::SleepFor(stream.spacing);
      Txn txn;
      Event event;
      event.type = stream.type;
      event.payload = absl::StrCat(R"({"refund":"till-1-r)", n,
                                   R"(","total_cents":)", 100 + n % 900, "}");
      const std::string id = txn.Emit(event);
      status_ = store->Commit(txn).status();
      committed_[id] = absl::Now();
    }
  }

  std::thread thread_;
  absl::Status status_;
  std::map<std::string, absl::Time> committed_;
};

std::string DrainConfig(const DrainSpec& spec, const BenchSink& sink,
                        int relay_port, const std::string& metrics_file) {
  const std::string url =
      absl::StrCat("http://127.0.0.1:", relay_port, "/hook");
  const std::string batch =
      spec.coding.empty() ? ""
                          : absl::StrCat("max_events: ", kBatchEvents,
                                         " compression: \"", spec.coding, "\"");
  return AgentConfig(url, sink.secrets_file(), spec.in_flight, batch,
                     absl::StrCat("metrics_file: \"", metrics_file,
                                  "\" metrics_interval: \"1s\""));
}

// The agent's drain ETA for the sink in its metrics file; -1 if absent.
double ReadEta(const std::string& metrics_file) {
  std::ifstream in(metrics_file);
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    double eta = 0;
    if (absl::ConsumePrefix(&rest, kEtaMetric) && absl::SimpleAtod(rest, &eta))
      return eta;
  }
  return -1;
}

// Runs the agent until every event (the backlog and the stream) is
// delivered, reading its ETA a quarter of the way.
absl::Status Drive(const DrainSpec& spec, SteppedAgent* agent, Store* store,
                   const std::string& metrics_file, DrainFigures* f,
                   std::map<std::string, absl::Time>* committed) {
  const int total = spec.events + spec.trailing.count;
  const int quarter = std::max(total / 4, 1);
  StreamCommitter stream(store, spec.trailing);
  Stopwatch wall;
  OUTBOX_RETURN_IF_ERROR(agent->Deliver(quarter).status());
  f->eta_seconds = ReadEta(metrics_file);
  Stopwatch rest;
  OUTBOX_RETURN_IF_ERROR(agent->Deliver(total - quarter).status());
  f->rest = rest.Elapsed();
  f->elapsed = wall.Elapsed();
  OUTBOX_RETURN_IF_ERROR(stream.Join());
  *committed = stream.committed();
  return absl::OkStatus();
}

// Reads the sink's log: distinct events, repeats, and each trailing event's
// latency from its commit to the first time the sink logged it (when it
// answered 2xx).
absl::Status TallySink(const BenchSink& sink, int events,
                       const std::map<std::string, absl::Time>& committed,
                       DrainFigures* f) {
  absl::flat_hash_map<std::string, int64_t> first_ms;
  for (const std::string& line : sink::ReadLines(sink.log_path())) {
    if (JsonField(line, "signature_valid") != "true") {
      return absl::InternalError(absl::StrCat(
          "outbox-sink logged a request without a valid signature: ", line));
    }
    int64_t ms = 0;
    absl::SimpleAtoi(JsonField(line, "ts_ms").value_or("0"), &ms);
    if (!first_ms.try_emplace(JsonString(line, "id"), ms).second) {
      ++f->duplicates;
    }
  }
  f->delivered = static_cast<int64_t>(first_ms.size());
  if (f->delivered != static_cast<int64_t>(committed.size()) + events) {
    return absl::InternalError(
        absl::StrCat("outbox-sink logged ", f->delivered, " distinct events; ",
                     committed.size() + events, " were committed"));
  }
  for (const auto& [id, at] : committed) {
    auto it = first_ms.find(id);
    if (it == first_ms.end()) {
      return absl::InternalError(
          absl::StrCat("outbox-sink never logged trailing event ", id));
    }
    f->trailing.Add(absl::FromUnixMillis(it->second) - at);
  }
  return absl::OkStatus();
}

}  // namespace

double DrainFigures::per_second() const {
  return delivered / std::max(absl::ToDoubleSeconds(elapsed), 1e-9);
}

absl::StatusOr<DrainFigures> RunCellularDrain(const DrainSpec& spec,
                                              CellularLink* link,
                                              const std::string& dir) {
  std::filesystem::create_directories(dir);
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          FillBacklog(spec, dir + "/db"));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<BenchSink> sink,
                          BenchSink::Start(dir + "/sink"));
  LinkOptions options;
  options.target_port = sink->port();
  options.one_way_delay = kRoundTrip / 2;
  options.reset_probability = kResetProbability;
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<LinkRelay> relay,
                          LinkRelay::Start(options));
  OUTBOX_RETURN_IF_ERROR(link->Shape(relay->port()));
  const std::string metrics_file = dir + "/agent.prom";
  OUTBOX_ASSIGN_OR_RETURN(
      std::unique_ptr<SteppedAgent> agent,
      SteppedAgent::Create(
          store.get(), DrainConfig(spec, *sink, relay->port(), metrics_file),
          spec.events + spec.trailing.count));
  DrainFigures f;
  std::map<std::string, absl::Time> committed;
  OUTBOX_RETURN_IF_ERROR(
      Drive(spec, agent.get(), store.get(), metrics_file, &f, &committed));
  OUTBOX_RETURN_IF_ERROR(ExpectPending(*store, 0, "cellular drain " + dir));
  OUTBOX_ASSIGN_OR_RETURN(f.up, link->Uplink());
  OUTBOX_ASSIGN_OR_RETURN(f.down, link->Downlink());
  f.http_bytes = relay->client_bytes();
  f.resets = relay->resets();
  f.connections = relay->connections();
  f.requests = agent->requests();
  f.cpu_us_per_event = agent->cpu_us_per_event();
  OUTBOX_RETURN_IF_ERROR(TallySink(*sink, spec.events, committed, &f));
  return f;
}

}  // namespace outbox::bench
