// Copyright (c) edge-outbox authors.
//
// outbox-pos-sim: an example firmware. It embeds the library the way a
// point-of-sale terminal would: the "till" commits sales (record + event in
// one Txn) on the main thread while the delivery agent runs on its own
// thread. Soak tests kill it with SIGKILL at random moments and restart it.
//
//   outbox-pos-sim --db DIR --config FILE --sales N [--rate R] [--till T]
//
// It prints "sale <sale-id> <event-id>" to stdout, flushed, only after the
// commit of that sale returned OK: a line on stdout is an acknowledged sale.
// The number of the next sale is stored in the same Txn as each sale, so a
// restarted simulator continues where the last commit left off. After the
// N-th sale it waits until the agent has delivered everything, prints
// "drained" and exits 0. Exit codes: 1 error, 2 usage.

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "outbox/agent.h"
#include "outbox/store.h"

namespace {

constexpr char kUsage[] =
    "usage: outbox-pos-sim --db DIR --config FILE --sales N [--rate R] "
    "[--till T]\n"
    "  --sales N   total sales to make (a restart continues the count)\n"
    "  --rate R    sales per second (default 50)\n"
    "  --till T    till name: ordering key and sale-id prefix (default "
    "till-1)\n";

constexpr char kTable[] = "sales";
constexpr char kNextSaleKey[] = "!next-sale";

std::atomic<outbox::Agent*> g_agent{nullptr};
std::atomic<bool> g_stop{false};

void OnSignal(int) {
  g_stop.store(true);
  outbox::Agent* agent = g_agent.load();
  if (agent != nullptr) agent->Stop();
}

int Fail(absl::string_view what, const absl::Status& s) {
  std::cerr << "outbox-pos-sim: " << what << ": " << s << "\n";
  return 1;
}

// One sale: the record, the sale counter and the event, all or nothing.
absl::StatusOr<outbox::CommitResult> CommitSale(outbox::Store* store,
                                                const std::string& till,
                                                int64_t n) {
  const std::string sale = absl::StrCat(till, "-", n);
  outbox::Txn txn;
  outbox::Event event;
  event.type = "sale.created";
  event.ordering_key = till;
  event.payload = absl::StrCat(R"({"sale":")", sale, R"(","n":)", n,
                               R"(,"total_cents":)", 100 + n % 900, "}");
  const std::string event_id = txn.Emit(event);
  txn.Put(kTable, sale,
          absl::StrCat(R"({"n":)", n, R"(,"event_id":")", event_id, R"("})"));
  txn.Put(kTable, kNextSaleKey, absl::StrCat(n + 1));
  txn.SetIdempotencyKey(sale);
  return store->Commit(txn);
}

}  // namespace

int main(int argc, char** argv) {
  std::string db, config, till = "till-1";
  int64_t sales = -1;
  double rate = 50;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--db" && has_value) {
      db = argv[++i];
    } else if (arg == "--config" && has_value) {
      config = argv[++i];
    } else if (arg == "--till" && has_value) {
      till = argv[++i];
    } else if (arg == "--sales" && has_value) {
      if (!absl::SimpleAtoi(argv[++i], &sales) || sales < 0) sales = -1;
    } else if (arg == "--rate" && has_value) {
      if (!absl::SimpleAtod(argv[++i], &rate) || rate <= 0) rate = -1;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "outbox-pos-sim: bad argument '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  if (db.empty() || config.empty() || sales < 0 || rate <= 0) {
    std::cerr << kUsage;
    return 2;
  }

  outbox::Options options;
  options.tables = {kTable};
  auto store = outbox::Store::Open(options, db);
  if (!store.ok()) return Fail("opening the store", store.status());

  outbox::AgentOptions agent_options;
  agent_options.config_path = config;
  agent_options.log = [](const outbox::LogRecord& record) {
    // The stable event name first, so a grep for one finds its lines.
    std::cerr << "outbox-pos-sim: agent: " << outbox::LogEventName(record.event)
              << ": " << record.message << "\n";
  };
  auto agent = outbox::Agent::Create(store->get(), std::move(agent_options));
  if (!agent.ok()) return Fail("starting the agent", agent.status());
  g_agent.store(agent->get());
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  absl::Status agent_status;
  std::thread delivery([&] { agent_status = (*agent)->Run(); });

  int64_t next = 0;
  absl::StatusOr<std::string> stored = (*store)->Get(kTable, kNextSaleKey);
  if (stored.ok() && !absl::SimpleAtoi(*stored, &next)) {
    next = 0;
  }
  int code = 0;
  const absl::Duration gap = absl::Seconds(1 / rate);
  for (int64_t n = next; n < sales && !g_stop.load(); ++n) {
    absl::StatusOr<outbox::CommitResult> result =
        CommitSale(store->get(), till, n);
    if (!result.ok()) {
      code = Fail("committing a sale", result.status());
      break;
    }
    // Printed only now: the sale is durable (sync=true) from this line on.
    std::printf("sale %s-%lld %s\n", till.c_str(), static_cast<long long>(n),
                result->event_ids.at(0).c_str());
    std::fflush(stdout);
    absl::SleepFor(gap);
  }
  while (code == 0 && !g_stop.load()) {
    absl::StatusOr<outbox::Stats> stats = (*store)->GetStats();
    if (!stats.ok()) {
      code = Fail("reading the queue", stats.status());
    } else if (stats->pending_events == 0) {
      std::printf("drained\n");
      std::fflush(stdout);
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  (*agent)->Stop();
  delivery.join();
  if (!agent_status.ok() && code == 0) code = Fail("delivering", agent_status);
  g_agent.store(nullptr);
  agent->reset();
  absl::Status closed = (*store)->Close();
  if (!closed.ok() && code == 0) code = Fail("closing the store", closed);
  return code;
}
