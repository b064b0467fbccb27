// Copyright (c) edge-outbox authors.
//
// Uses an installed edge-outbox through its public headers only: commits a
// record with its event, then lets an agent try to deliver it to a receiver
// that is not there (port 1 refuses), which must leave it pending.
//
//   consumer DB_DIR      exits 0 on the expected outcome

#include <iostream>

#include "outbox/agent.h"
#include "outbox/store.h"

int main(int argc, char** argv) {
  if (argc != 2) return std::cerr << "usage: consumer DB_DIR\n", 2;
  outbox::Options options;
  options.tables = {"orders"};
  auto store = outbox::Store::Open(options, argv[1]);
  if (!store.ok()) return std::cerr << store.status() << "\n", 1;
  outbox::Txn txn;
  txn.Put("orders", "order-1", "{}");
  outbox::Event event;
  event.type = "order.created";
  event.payload = "{}";
  txn.Emit(event);
  auto committed = (*store)->Commit(txn);
  if (!committed.ok()) return std::cerr << committed.status() << "\n", 1;

  outbox::AgentOptions agent_options;
  agent_options.watch_network = false;
  agent_options.config_text = R"(
    destinations { name: "nobody" url: "http://127.0.0.1:1/" }
    routes { event_type: "*" destination: "nobody" }
  )";
  auto agent = outbox::Agent::Create(store->get(), std::move(agent_options));
  if (!agent.ok()) return std::cerr << agent.status() << "\n", 1;
  auto pending = (*agent)->Drain();
  if (!pending.ok()) return std::cerr << pending.status() << "\n", 1;
  std::cout << "committed " << committed->event_ids[0] << "; pending after "
            << "drain to an unreachable receiver: " << *pending << "\n";
  return *pending == 1 ? 0 : 1;
}
