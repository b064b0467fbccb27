// Copyright (c) edge-outbox authors.
//
// Writes a golden store with the library of an earlier commit
// (tests/compat/make_golden.sh compiles this file inside that commit's
// tree). It uses only the API every golden commit has; GOLDEN_WORKFLOWS
// (commits with Store::Settle and workflows) adds two workflows, one
// half-way. Prints, on stdout, what the store holds, one fact a line, for
// tests/compat/golden_test.cc:
//
//   pending <event id>
//   dead <event id>
//   quarantined <dead letter id>
//   idempotency <key> <event id>
//   delivered_total <n>
//   workflow <event id> next <step name>
//
// Usage: golden_writer DIR

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "outbox/store.h"
#include "outbox/txn.h"
#include "rocksdb/db.h"
#ifdef GOLDEN_WORKFLOWS
#include "proto/storage.pb.h"
#endif

namespace {

using outbox::Store;

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "golden_writer: %s\n", what.c_str());
    std::exit(1);
  }
}

std::unique_ptr<Store> Open(const std::string& dir) {
  outbox::Options options;
  options.tables = {"sales"};
  auto store = Store::Open(options, dir);
  Check(store.ok(), store.status().ToString());
  return std::move(*store);
}

// Commits one sale and its event; returns the event id.
std::string Sale(Store* store, int n, const std::string& key = "",
                 const std::string& idempotency_key = "",
                 const std::string& destination = "",
                 const std::string& type = "sale.created") {
  outbox::Txn txn;
  outbox::Event e;
  e.type = type;
  e.ordering_key = key;
  e.destination = destination;
  e.payload =
      absl::StrCat(R"({"sale":)", n, R"(,"total_cents":)", 100 * n, "}");
  const std::string id = txn.Emit(e);
  txn.Put("sales", absl::StrCat("sale-", n), e.payload);
  if (!idempotency_key.empty()) {
    txn.SetIdempotencyKey(idempotency_key, absl::StrCat("receipt-", n));
  }
  auto result = store->Commit(txn);
  Check(result.ok(), result.status().ToString());
  return id;
}

outbox::PendingEvent Find(Store* store, const std::string& id) {
  auto e = store->FindPending(id);
  Check(e.ok(), e.status().ToString());
  return *e;
}

// Damages the pending entry at `seq` with raw RocksDB, as a bad sector
// would, and flushes every family, so that the store holds table files as
// well as a log.
void DamageAndFlush(const std::string& dir, uint64_t seq) {
  std::vector<std::string> names;
  rocksdb::Options options;
  Check(rocksdb::DB::ListColumnFamilies(options, dir, &names).ok(), "list");
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& n : names) families.emplace_back(n, options);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  Check(rocksdb::DB::Open(options, dir, families, &handles, &raw).ok(),
        "raw open");
  std::string key(8, '\0');
  for (int i = 0; i < 8; ++i) key[7 - i] = static_cast<char>(seq >> (8 * i));
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    if (h->GetName() == "outbox.pending") {
      Check(raw->Put(rocksdb::WriteOptions(), h, key, "\xff\xfe not a proto")
                .ok(),
            "damage");
    }
  }
  Check(raw->Flush(rocksdb::FlushOptions(), handles).ok(), "flush");
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    Check(raw->DestroyColumnFamilyHandle(h).ok(), "handle");
  }
  Check(raw->Close().ok(), "raw close");
  delete raw;
}

#ifdef GOLDEN_WORKFLOWS
// Settles workflow event `id` as the agent does after its first step
// ("reserve") answered 2xx: the step done, the next ("ship") marked sent.
void FirstStepDone(Store* store, const std::string& id) {
  const outbox::PendingEvent event = Find(store, id);
  outbox::storage::WorkflowState state;
  state.set_phase(outbox::storage::WORKFLOW_PHASE_FORWARD);
  state.set_next_revert(-1);
  state.set_started_unix_ms(absl::ToUnixMillis(absl::Now()));
  auto* reserve = state.add_steps();
  reserve->set_name("reserve");
  reserve->set_status(outbox::storage::STEP_STATUS_DONE);
  reserve->set_destination("inventory");
  reserve->set_request(event.payload);
  reserve->set_response(R"({"reservationId":"RES-1"})");
  reserve->set_http_status(200);
  reserve->set_sent(true);
  auto* ship = state.add_steps();
  ship->set_name("ship");
  ship->set_destination("shipping");
  ship->set_request(event.payload);
  ship->set_sent(true);
  state.set_next_step(1);
  state.set_results(1);
  outbox::storage::StepResult row;
  row.set_step("reserve");
  row.set_attempt(1);
  row.set_method("POST");
  row.set_http_status(200);
  row.set_outcome("done");
  row.set_destination("inventory");
  row.set_unix_ms(absl::ToUnixMillis(absl::Now()));
  outbox::Settlement s;
  s.kind = outbox::Settlement::Kind::kStepDone;
  s.event = event;
  s.workflow_state = state.SerializeAsString();
  s.workflow_results = {row.SerializeAsString()};
  s.first_result = 0;
  s.workflow_marked_step = 1;
  auto settled = store->Settle({s});
  Check(settled.ok() && settled->applied == 1, "settling the first step");
}
#endif

}  // namespace

int main(int argc, char** argv) {
  Check(argc == 2, "usage: golden_writer DIR");
  const std::string dir = argv[1];
  std::unique_ptr<Store> store = Open(dir);
  std::vector<std::string> pending = {
      Sale(store.get(), 1, "till-1"), Sale(store.get(), 2, "till-1"),
      Sale(store.get(), 3), Sale(store.get(), 4, "", "", "sink")};
  const std::string idem_a = Sale(store.get(), 5, "", "order-1005");
  const std::string idem_b = Sale(store.get(), 6, "till-2", "order-1006");
  pending.push_back(idem_a);
  pending.push_back(idem_b);
  // A failed attempt, due again at once.
  outbox::AttemptRecord attempt;
  attempt.error = "HTTP 503: the receiver is unavailable";
  attempt.http_status = 503;
  attempt.next_attempt = absl::Now();
  Check(store->RecordAttempt(Find(store.get(), pending[2]), attempt).ok(),
        "attempt");
  // Two dead letters and one delivered event.
  std::vector<std::string> dead = {Sale(store.get(), 7), Sale(store.get(), 8)};
  for (const std::string& id : dead) {
    Check(store->MoveToDeadLetters(Find(store.get(), id), "HTTP 422: rejected")
              .ok(),
          "dead letter");
  }
  Check(store->MarkDelivered(Find(store.get(), Sale(store.get(), 9))).ok(),
        "delivered");
  // An entry that will not decode, quarantined into the dead letters.
  const uint64_t damaged = Find(store.get(), Sale(store.get(), 10)).seq;
  Check(store->Close().ok(), "close");
  store.reset();
  DamageAndFlush(dir, damaged);
  store = Open(dir);
  Check(store->Quarantine(damaged).ok(), "quarantine");
  auto listed = store->ListDeadLetters(100);
  Check(listed.ok(), "list dead");
  for (const outbox::DeadLetter& d : *listed) {
    if (d.undecodable) std::printf("quarantined %s\n", d.event.id.c_str());
  }
  pending.push_back(Sale(store.get(), 11));  // after the flush: in the log
#ifdef GOLDEN_WORKFLOWS
  const std::string halfway =
      Sale(store.get(), 12, "", "", "", "order.created");
  FirstStepDone(store.get(), halfway);
  const std::string unstarted =
      Sale(store.get(), 13, "", "", "", "order.created");
  std::printf("workflow %s next ship\n", halfway.c_str());
  std::printf("workflow %s next reserve\n", unstarted.c_str());
#endif
  for (const std::string& id : pending) std::printf("pending %s\n", id.c_str());
  for (const std::string& id : dead) std::printf("dead %s\n", id.c_str());
  std::printf("idempotency order-1005 %s\n", idem_a.c_str());
  std::printf("idempotency order-1006 %s\n", idem_b.c_str());
  std::printf("delivered_total 1\n");
  Check(store->Close().ok(), "close");
  return 0;
}
