// Copyright (c) edge-outbox authors.
//
// Checks what a receiver got against what a killed-and-restarted
// outbox-pos-sim acknowledged and what its store holds at the end. The
// invariants are listed at the top of pos_sim_kill_test.cc.

#ifndef OUTBOX_TESTS_KILL_DELIVERY_AUDIT_H_
#define OUTBOX_TESTS_KILL_DELIVERY_AUDIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "outbox/store.h"
#include "tests/kill/sink_log_tail.h"

namespace outbox::testing {

// A "sale <sale-id> <event-id>" line outbox-pos-sim printed.
struct AcknowledgedSale {
  int64_t n = -1;
  std::string event_id;
  int run = 0;  // which start of the simulator printed it
};

// What the soak saw.
struct AuditInput {
  std::string till;   // --till: sale ids are "<till>-<n>"
  int64_t sales = 0;  // --sales of the final run
  std::vector<AcknowledgedSale> acknowledged;
  std::vector<SinkRequest> requests;  // the sink's whole log
};

struct AuditReport {
  int64_t acknowledged = 0;
  int64_t committed = 0;                 // the store's next-sale counter
  int64_t committed_unacknowledged = 0;  // committed, line never read
  int64_t requests = 0;
  int64_t deliveries = 0;  // 2xx answers
  int64_t duplicates = 0;  // requests the sink flagged as already processed
  int64_t resends = 0;     // requests after an id's first one
  int64_t drops = 0;
  int64_t failures = 0;  // answered, not 2xx
  int64_t violation_count = 0;
  std::vector<std::string> violations;  // the first few, readable
};

// Audits the soak. `store` is the soak's store, opened after the last run
// (read-only is enough).
AuditReport AuditDeliveries(const AuditInput& input, Store* store);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_KILL_DELIVERY_AUDIT_H_
