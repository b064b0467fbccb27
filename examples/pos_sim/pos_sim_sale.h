// Copyright (c) edge-outbox authors.
//
// What outbox-pos-sim commits: a sale's record, the sale counter and its
// event in one Txn, and (the saga mode) a refund in a later Txn that cancels
// the sale's workflow. The saga mode's payloads are seed 003's order: what
// its four services (inventory, fraud check, shipping, billing) read, a mix
// of risk scores and shipping types, and some sales whose card is declined.

#ifndef OUTBOX_EXAMPLES_POS_SIM_POS_SIM_SALE_H_
#define OUTBOX_EXAMPLES_POS_SIM_POS_SIM_SALE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "outbox/store.h"

namespace outbox::pos_sim {

inline constexpr char kTable[] = "sales";
inline constexpr char kNextSaleKey[] = "!next-sale";

// How the sales look. Plain data.
struct SaleMix {
  enum class Saga {
    kNone,     // {"sale","n","total_cents"}: one request per sale
    kWhole,    // the order, one object every step receives whole
    kPerStep,  // one member per step: reserve, fraud, shipping, billing
  };
  Saga saga = Saga::kNone;
  // Every K-th sale (n % K == K - 1) has its card declined: its billing
  // request carries "simulate": "decline". 0: none.
  int64_t decline_every = 0;
  // Every K-th sale that is not declined is refunded once every sale is
  // delivered: a later Txn marks it refunded and cancels its workflow. 0:
  // none.
  int64_t refund_every = 0;
  // Whether a sale's event carries its till as the ordering key (FIFO per
  // till), as the demo's tills commit them. The drain-time benchmark sends
  // the same payloads unkeyed, so that requests can overlap.
  bool keyed_by_till = true;
};

// Sale n's fraud risk score, 0..99 (a spread: both billing routes occur).
int RiskScore(int64_t n);
// "international" for every third sale, "domestic" otherwise.
std::string ShippingType(int64_t n);
bool IsDeclined(const SaleMix& mix, int64_t n);
bool IsRefunded(const SaleMix& mix, int64_t n);

// The event payload of sale `sale` (number n).
std::string SalePayload(const SaleMix& mix, const std::string& sale, int64_t n);

// Commits sale n of `till`: the record, the counter and the event, all or
// nothing, idempotent under the sale id. Errors: Store::Commit's.
absl::StatusOr<CommitResult> CommitSale(Store* store, const SaleMix& mix,
                                        const std::string& till, int64_t n);

// Commits the refund of sale n of `till` in a Txn of its own: its record marked
// refunded and Txn::Cancel of its event, idempotent under "refund-<sale>".
// Returns the cancelled event's id. Errors: kNotFound (no such sale),
// kDataLoss (its record names no event), Store's.
absl::StatusOr<std::string> CommitRefund(Store* store, const std::string& till,
                                         int64_t n);

}  // namespace outbox::pos_sim

#endif  // OUTBOX_EXAMPLES_POS_SIM_POS_SIM_SALE_H_
