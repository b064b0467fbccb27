// Copyright (c) edge-outbox authors.
//
// Checks what a receiver got against what a killed-and-restarted
// outbox-pos-sim acknowledged and what its store holds at the end: the
// SIGKILL soak's audit (the invariants are listed at the top of
// tests/kill/pos_sim_kill_test.cc) and outbox-demo's count of lost sales.
// Each invariant is one AuditCheck, reported under a stable name.
//
// Each broken invariant is reported by one check, the narrowest that covers
// it, so that a test can tell which fired: a sink line that is not a sale
// event is judged by not_a_sale_event alone; an acknowledged number outside
// the sales by acknowledged_out_of_range alone; a sale sent under several
// ids by sale_with_two_ids, the id comparisons judging only sales sent under
// one id; an acknowledged sale's delivery by acknowledged_not_delivered,
// committed_not_delivered judging the sales never acknowledged; a sale
// without a record by not_committed, beyond_counter judging sales with a
// record; and order_broken judges only sales whose predecessor was answered
// 2xx (a predecessor never answered is the delivery checks').

#ifndef OUTBOX_TOOLS_AUDIT_DELIVERY_AUDIT_H_
#define OUTBOX_TOOLS_AUDIT_DELIVERY_AUDIT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "outbox/store.h"
#include "tools/audit/sink_log_tail.h"

namespace outbox::audit {

// The audit's checks; AuditCheckName gives each one's stable name.
enum class AuditCheck {
  kAcknowledgedTwice,         // a sale acknowledged by two lines
  kAcknowledgedOutOfRange,    // an acknowledged number outside [0, sales)
  kNotASaleEvent,             // a sink line that is no sale of the till
  kBadSignature,              // a request whose signature did not verify
  kIdWithTwoBodies,           // requests with one id carrying two bodies
  kSaleWithTwoIds,            // requests for one sale carrying two ids
  kAcknowledgedNotDelivered,  // an acknowledged sale never answered 2xx
  kAcknowledgedIdNotSent,     // an acknowledged sale sent under another id
  kNotCommitted,              // a sale the sink saw has no record
  kCommittedIdDiffers,        // a sale sent under another id than its record
  kCounterWrong,              // the next-sale counter is not --sales
  kCommittedNotDelivered,     // a committed, unacknowledged sale never 2xx
  kBeyondCounter,             // a sale with a record at or above the counter
  kNotDrained,                // events pending or dead after the last run
  kOrderBroken,               // a sale sent before its predecessor's 2xx
                              // (or behind it in one batch)
  // A committed sale never answered 2xx that its event class gave up
  // (Options::event_classes: a dead letter whose reason starts "evicted:"
  // or "expired:"): not lost, but not delivered either. Judged instead of
  // acknowledged_not_delivered / committed_not_delivered, and its dead
  // letter is not counted by not_drained.
  kGivenUpByClass,
};
// E.g. "sale_with_two_ids".
const char* AuditCheckName(AuditCheck check);

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
  // bad_signature judges only when set: off for a log with no signatures
  // to verify (MQTT deliveries, tools/recorder/mqtt_recorder.h).
  bool require_signatures = true;
};

struct AuditReport {
  int64_t acknowledged = 0;
  int64_t committed = 0;                 // the store's next-sale counter
  int64_t committed_unacknowledged = 0;  // committed, line never read
  int64_t requests = 0;          // the log's lines: one per event received
  int64_t batch_requests = 0;    // batches among the requests, which carried
  int64_t batched_requests = 0;  // this many of the lines
  int64_t deliveries = 0;        // 2xx answers
  int64_t duplicates = 0;  // requests the sink flagged as already processed
  int64_t resends = 0;     // requests after an id's first one
  int64_t drops = 0;
  int64_t failures = 0;  // answered, not 2xx
  int64_t given_up = 0;  // sales evicted or expired by their class
  int64_t violation_count = 0;
  // Violations per check, by AuditCheckName; only checks that fired.
  std::map<std::string, int64_t> fired;
  // The first few, readable, each starting with "[<check name>] ".
  std::vector<std::string> violations;
};

// Audits the soak. `store` is the soak's store, opened after the last run
// (read-only is enough).
AuditReport AuditDeliveries(const AuditInput& input, Store* store);

// The report's figures for a soak's output: three lines, each starting with
// `prefix` ("[kill soak]"), no newline at the end.
std::string AuditSummary(const AuditReport& report, const std::string& prefix);

}  // namespace outbox::audit

#endif  // OUTBOX_TOOLS_AUDIT_DELIVERY_AUDIT_H_
