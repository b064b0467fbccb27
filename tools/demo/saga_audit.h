// Copyright (c) edge-outbox authors.
//
// The saga chapter's audit: what seed 003's four services (one outbox-sink
// with tools/sink/testdata/seed003_routes.json) logged of each sale's
// workflow, against what the sale was meant to do and what the till's store
// says it did. Each check has a name; a violation reads
// "<sale>: <check>: <what>". Pure functions: saga_audit_test.cc feeds them
// hand-made logs that break each check.

#ifndef OUTBOX_TOOLS_DEMO_SAGA_AUDIT_H_
#define OUTBOX_TOOLS_DEMO_SAGA_AUDIT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/audit/sink_log_tail.h"

namespace outbox::demo {

// The steps, in order: reserve (revert: release the reservation), fraud
// (read-only), shipping (revert: cancel the shipment), billing.
inline constexpr const char* kSagaSteps[] = {"reserve", "fraud", "shipping",
                                             "billing"};

enum class SagaOutcome {
  kCompleted,          // every step answered 2xx
  kFailedCompensated,  // billing failed for good; the others reverted
  kCancelCompensated,  // cancelled after commit; its steps reverted
  kNeedsAttention,     // anything else the store shows (a revert failed...)
};

std::string OutcomeName(SagaOutcome outcome);

// One request of a sale's workflow: which step (or its revert) it was.
struct SagaCall {
  std::string step;
  bool revert = false;
  audit::SinkRequest request;
};

// What the till's store holds of the workflow (outboxctl show's data).
struct StoredWorkflow {
  std::string phase;  // ctl::PhaseName: "completed", "compensated", ...
  bool cancelled = false;
  std::map<std::string, std::string> responses;  // step -> stored answer
};

struct SagaSale {
  std::string sale;  // "saga-7"
  std::string event_id;
  SagaOutcome expected = SagaOutcome::kCompleted;
  StoredWorkflow stored;
  std::vector<SagaCall> calls;  // its requests, in log order
};

// Which sale and step each webhook-id belongs to: the step ids of
// agent/expr/step_id.h, recomputed from each sale's event id.
class SagaIds {
 public:
  struct Owner {
    size_t sale = 0;
    std::string step;
    bool revert = false;
  };
  // `event_ids`: sale i's event id at [i].
  explicit SagaIds(const std::vector<std::string>& event_ids);
  // nullptr for an id of no step of any sale.
  const Owner* Find(const std::string& webhook_id) const;

 private:
  std::map<std::string, Owner> owners_;
};

// Gives each request to its sale's calls (sales[i] for event id [i] of
// `ids`). Returns a violation ("unknown_id: ...") for each request that is
// no step of any sale: a step resent under a new id would be one.
std::vector<std::string> AssignSagaCalls(
    const std::vector<audit::SinkRequest>& requests, const SagaIds& ids,
    std::vector<SagaSale>* sales);

// The outcome the store's workflow shows.
SagaOutcome StoredOutcome(const StoredWorkflow& stored);

// Every check over one sale; empty when it passed them all.
std::vector<std::string> AuditSagaSale(const SagaSale& sale);

// Per outcome (as the store shows it): sales, their requests (resends
// included), distinct steps reverted (a revert answered 2xx) and requests
// the receiver flagged as duplicates.
struct SagaRow {
  int64_t sales = 0;
  int64_t requests = 0;
  int64_t reverts = 0;
  int64_t duplicates = 0;
};
std::map<SagaOutcome, SagaRow> TallySaga(const std::vector<SagaSale>& sales);

// The table: one row per outcome, all four always shown.
std::string FormatSagaTable(const std::map<SagaOutcome, SagaRow>& rows);

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_SAGA_AUDIT_H_
