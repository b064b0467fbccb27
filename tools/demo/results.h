// Copyright (c) edge-outbox authors.
//
// The demo's final table: per till and in total, what was committed, what
// the receiver got, and what was lost. "Lost" is the delivery audit's
// (tools/audit/): a committed sale, acknowledged by pos-sim or only in its
// store, that the receiver never answered 2xx once every till had drained.

#ifndef OUTBOX_TOOLS_DEMO_RESULTS_H_
#define OUTBOX_TOOLS_DEMO_RESULTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/audit/delivery_audit.h"

namespace outbox::demo {

struct TillResult {
  std::string till;
  int64_t committed = 0;   // the store's sale counter at the end
  int64_t delivered = 0;   // distinct sales answered 2xx
  int64_t duplicates = 0;  // requests the receiver flagged as seen before
  int64_t lost = 0;        // LostSales of its audit
  int64_t dead_letters = 0;
  int64_t violations = 0;  // every audit check that fired, lost included
  // From the till's first start until the receiver saw its first request.
  absl::Duration offline;
  // Sales first answered 2xx, per second of the drain (its first to its
  // last first 2xx); 0 with fewer than two.
  double drain_rate = 0;
};

// Committed sales never answered 2xx: acknowledged ones and ones whose line
// the kill cut off (acknowledged_not_delivered + committed_not_delivered).
int64_t LostSales(const audit::AuditReport& report);

// Sales per second between the first and the last of `delivered` first
// deliveries; 0 when the span is empty.
double DrainRate(int64_t delivered, absl::Time first, absl::Time last);

// The table, one row per till and a total row (offline: the longest;
// drain rate: all tills' sales over the whole drain, `total_drain`).
std::string FormatResults(const std::vector<TillResult>& tills,
                          absl::Duration total_drain);

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_RESULTS_H_
