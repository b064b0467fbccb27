// Copyright (c) edge-outbox authors.
//
// outbox-pos-sim: an example firmware. It embeds the library the way a
// point-of-sale terminal would: the "till" commits sales (record + event in
// one Txn) on the main thread while the delivery agent runs on its own
// thread. Soak tests kill it with SIGKILL at random moments and restart it;
// the demo's saga chapter runs it with --saga (pos_sim_flags.cc).
//
// It prints "sale <sale-id> <event-id>" to stdout, flushed, only after the
// commit of that sale returned OK: a line on stdout is an acknowledged sale.
// The number of the next sale is stored in the same Txn as each sale, so a
// restarted simulator continues where the last commit left off. After the
// N-th sale it waits until the agent has delivered everything (then, with
// --refund-every, commits the refunds, printing "refund <sale-id>
// <event-id>" after each, and waits again), prints "drained" and exits 0.
// Exit codes: 1 error, 2 usage.

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "examples/pos_sim/pos_sim_flags.h"
#include "examples/pos_sim/pos_sim_sale.h"
#include "outbox/agent.h"
#include "outbox/store.h"

namespace outbox::pos_sim {
namespace {

std::atomic<Agent*> g_agent{nullptr};
std::atomic<bool> g_stop{false};

void OnSignal(int) {
  g_stop.store(true);
  Agent* agent = g_agent.load();
  if (agent != nullptr) agent->Stop();
}

int Fail(absl::string_view what, const absl::Status& s) {
  std::cerr << "outbox-pos-sim: " << what << ": " << s << "\n";
  return 1;
}

void PrintLine(const char* kind, const std::string& till, int64_t n,
               const std::string& event_id) {
  std::printf("%s %s-%lld %s\n", kind, till.c_str(), static_cast<long long>(n),
              event_id.c_str());
  std::fflush(stdout);
}

int CommitSales(Store* store, const PosSimFlags& f) {
  int64_t next = 0;
  absl::StatusOr<std::string> stored = store->Get(kTable, kNextSaleKey);
  if (stored.ok() && !absl::SimpleAtoi(*stored, &next)) next = 0;
  const absl::Duration gap = absl::Seconds(1 / f.rate);
  for (int64_t n = next; n < f.sales && !g_stop.load(); ++n) {
    absl::StatusOr<CommitResult> result = CommitSale(store, f.mix, f.till, n);
    if (!result.ok()) return Fail("committing a sale", result.status());
    absl::SleepFor(f.print_after);
    // Printed only now: the sale is durable (sync=true) from this line on;
    // with --fsync off it is not, which is the bug tests/vm must catch.
    PrintLine("sale", f.till, n, result->event_ids.at(0));
    absl::SleepFor(gap);
  }
  return 0;
}

// Waits until nothing is pending. Returns 1 on a store error, 0 otherwise
// (also when stopped).
int WaitDrained(Store* store) {
  while (!g_stop.load()) {
    absl::StatusOr<Stats> stats = store->GetStats();
    if (!stats.ok()) return Fail("reading the queue", stats.status());
    if (stats->pending_events == 0) return 0;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return 0;
}

// The refunds come after every sale was delivered, as a till's would: the
// workflows they cancel have completed, so the agent queues each again and
// reverts its steps.
int CommitRefunds(Store* store, const PosSimFlags& f) {
  for (int64_t n = 0; n < f.sales && !g_stop.load(); ++n) {
    if (!IsRefunded(f.mix, n)) continue;
    absl::StatusOr<std::string> event_id = CommitRefund(store, f.till, n);
    if (!event_id.ok()) return Fail("committing a refund", event_id.status());
    PrintLine("refund", f.till, n, *event_id);
  }
  return 0;
}

int Sell(Store* store, const PosSimFlags& f) {
  int code = CommitSales(store, f);
  if (code == 0) code = WaitDrained(store);
  if (code == 0 && f.mix.refund_every > 0) {
    code = CommitRefunds(store, f);
    if (code == 0) code = WaitDrained(store);
  }
  if (code == 0 && !g_stop.load()) {
    std::printf("drained\n");
    std::fflush(stdout);
  }
  return code;
}

int Run(const PosSimFlags& f) {
  // The store options that the configuration names (event classes, memory
  // profile): the store is opened with them, as outbox-agent opens it, and
  // the agent checks that the classes agree.
  Options options;
  options.tables = {kTable};
  options.sync = f.fsync;
  const absl::Status loaded = LoadStoreOptions(f.config, &options);
  if (!loaded.ok()) return Fail("reading the configuration", loaded);
  auto store = Store::Open(options, f.db);
  if (!store.ok()) return Fail("opening the store", store.status());

  AgentOptions agent_options;
  agent_options.config_path = f.config;
  agent_options.log = [](const LogRecord& record) {
    // The stable event name first, so a grep for one finds its lines.
    std::cerr << "outbox-pos-sim: agent: " << LogEventName(record.event) << ": "
              << record.message << "\n";
  };
  auto agent = Agent::Create(store->get(), std::move(agent_options));
  if (!agent.ok()) return Fail("starting the agent", agent.status());
  g_agent.store(agent->get());
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  absl::Status agent_status;
  std::thread delivery([&] { agent_status = (*agent)->Run(); });
  int code = Sell(store->get(), f);
  (*agent)->Stop();
  delivery.join();
  if (!agent_status.ok() && code == 0) code = Fail("delivering", agent_status);
  g_agent.store(nullptr);
  agent->reset();
  absl::Status closed = (*store)->Close();
  if (!closed.ok() && code == 0) code = Fail("closing the store", closed);
  return code;
}

}  // namespace
}  // namespace outbox::pos_sim

int main(int argc, char** argv) {
  using outbox::pos_sim::ParsePosSimFlags;
  using outbox::pos_sim::PosSimUsage;
  absl::StatusOr<outbox::pos_sim::PosSimFlags> flags =
      ParsePosSimFlags(std::vector<std::string>(argv + 1, argv + argc));
  if (!flags.ok()) {
    std::cerr << "outbox-pos-sim: " << flags.status().message() << "\n"
              << PosSimUsage();
    return 2;
  }
  if (flags->help) {
    std::cout << PosSimUsage();
    return 0;
  }
  return outbox::pos_sim::Run(*flags);
}
