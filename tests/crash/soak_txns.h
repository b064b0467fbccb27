// Copyright (c) edge-outbox authors.
//
// The soak's random business transactions.

#ifndef OUTBOX_TESTS_CRASH_SOAK_TXNS_H_
#define OUTBOX_TESTS_CRASH_SOAK_TXNS_H_

#include <cstdint>
#include <random>

#include "absl/time/time.h"
#include "tests/crash/soak_model.h"

namespace outbox::testing {

// The ordering keys soak transactions use: "k0" ... "k3".
inline constexpr int kSoakOrderingKeys = 4;

// Which ordering keys a transaction may use: "k<n>" for every n that is
// `slot` modulo `slots`. Threads committing at once use one slot each, so
// each key's commit order is the call order of a single thread (the model
// cannot know how the store ordered commits that raced). REQUIRES: 0 <= slot
// < slots <= kSoakOrderingKeys.
struct OrderingKeySlot {
  int slot = 0;
  int slots = 1;
};

// A transaction of 1-2 records and 1-3 events (see soak_records.h): events
// with one of the ordering keys `keys` allows or none, some due only a few
// seconds from `now`, a fifth of them running the soak's workflow; 10%
// cancel a recent workflow `model` knows committed (Txn::Cancel); 40% with
// a fresh idempotency key, and 10% repeating the key of a transaction
// `model` knows committed less than `window` / 2 ago on the store clock
// (`store_now`, Store::StoreClockNow: the window's own clock, which no jump
// of the wall clock moves): the store must answer those as duplicates and
// write nothing.
ModelTxn MakeSoakTxn(uint64_t serial, absl::Time now, absl::Time store_now,
                     absl::Duration window, const SoakModel& model,
                     std::mt19937_64* gen,
                     OrderingKeySlot keys = OrderingKeySlot());

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_TXNS_H_
