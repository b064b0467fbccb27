// Copyright (c) edge-outbox authors.
//
// Bytes on the wire per event: the demo's sales (outbox-pos-sim's payloads,
// one till, its sales keyed by the till) drained in batches of 50 into
// outbox-sink, with the batch body sent as it is, gzip and zstd
// (Destination batch.compression). Measured as what the agent sent through
// a counting relay in front of the receiver (HTTP headers and bodies, not
// TCP/IP framing), per event delivered, against the uncompressed batches.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "examples/pos_sim/pos_sim_sale.h"
#include "tests/bench/bench_agent.h"
#include "tests/bench/bench_env.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/link_relay.h"

namespace outbox::bench {
namespace {

constexpr int kBatch = 50;

struct WireDrain {
  std::string coding;  // batch.compression
  double bytes_per_event = 0;
  uint64_t requests = 0;
};

absl::Status Drain(const std::string& dir, int events, WireDrain* d) {
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<BenchSink> sink,
                          BenchSink::Start(dir + "/sink"));
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenBenchStore(dir + "/db", /*sync=*/false));
  pos_sim::SaleMix mix;  // plain sales, as the demo's tills commit them
  for (int n = 0; n < events; ++n) {
    OUTBOX_RETURN_IF_ERROR(
        pos_sim::CommitSale(store.get(), mix, "till-1", n).status());
  }
  const std::string batch =
      absl::StrCat("max_events: ", kBatch, " compression: \"", d->coding, "\"");
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<LinkRelay> relay,
                          LinkRelay::Start({sink->port()}));
  const std::string url =
      absl::StrCat("http://127.0.0.1:", relay->port(), "/hook");
  OUTBOX_ASSIGN_OR_RETURN(
      std::unique_ptr<SteppedAgent> agent,
      SteppedAgent::Create(
          store.get(),
          AgentConfig(url, sink->secrets_file(), /*max_in_flight=*/8, batch),
          events));
  OUTBOX_RETURN_IF_ERROR(agent->Deliver(events).status());
  OUTBOX_RETURN_IF_ERROR(ExpectPending(*store, 0, "wire drain " + d->coding));
  // Every line the sink logged must carry a valid signature: the decoded
  // bodies are what the agent signed.
  OUTBOX_RETURN_IF_ERROR(sink->CheckLogged("", events));
  d->bytes_per_event = static_cast<double>(relay->client_bytes()) / events;
  d->requests = agent->requests();
  return absl::OkStatus();
}

}  // namespace

absl::Status RunWireRows(const Scale& scale, const std::string& dir,
                         Table* table) {
  const int events = std::max(scale.drain_events / 4, kBatch * 4);
  std::vector<WireDrain> drains = {{"none"}, {"gzip"}, {"zstd"}};
  for (WireDrain& d : drains) {
    OUTBOX_RETURN_IF_ERROR(Drain(dir + "/wire/" + d.coding, events, &d));
    const bool baseline = d.coding == "none";
    table->Add(Row{
        absl::StrCat("wire.", d.coding),
        absl::StrCat("demo sales in batches of ", kBatch, ", ",
                     baseline ? "uncompressed" : d.coding),
        d.bytes_per_event, "B/event",
        absl::StrCat(events, " events in ", d.requests,
                     " requests; sent through a counting relay (HTTP "
                     "headers and bodies)"),
        baseline ? std::vector<Ratio>{} : std::vector<Ratio>{Vs("wire.none")}});
  }
  return absl::OkStatus();
}

}  // namespace outbox::bench
