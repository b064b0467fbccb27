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

// A transaction of 1-2 records and 1-3 events (see soak_records.h): events
// with one of four ordering keys or none, some due only a few seconds from
// `now`; 40% with a fresh idempotency key, and 10% repeating the key of a
// transaction `model` knows committed less than `window` / 2 ago (the store
// must answer those as duplicates and write nothing).
ModelTxn MakeSoakTxn(uint64_t serial, absl::Time now, absl::Duration window,
                     const SoakModel& model, std::mt19937_64* gen);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_TXNS_H_
