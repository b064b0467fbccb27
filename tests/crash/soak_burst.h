// Copyright (c) edge-outbox authors.
//
// Commits from several threads at once, for the power-cut soak: the writers
// queue behind a group commit leader (lib/store_impl.h), so a cut can land
// in a group of several writers.

#ifndef OUTBOX_TESTS_CRASH_SOAK_BURST_H_
#define OUTBOX_TESTS_CRASH_SOAK_BURST_H_

#include <cstddef>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "outbox/store.h"
#include "outbox/txn.h"

namespace outbox::testing {

// One commit of a burst: what to commit, and how it ended.
struct BurstCommit {
  size_t index = 0;          // the transaction's index in the SoakModel
  const Txn* txn = nullptr;  // borrowed; must outlive the burst
  absl::StatusOr<CommitResult> result = absl::UnknownError("not committed");
  bool power_on = true;  // `powered()` right after the call returned
};

// Commits shares[i] from thread i, in order, one Commit after another; the
// threads start together. Returns once every thread has finished, with each
// BurstCommit's result and power_on filled in. The caller's thread only
// waits: whatever the results touch (the model, its ledger) is the caller's
// to update afterwards, on its own thread.
// REQUIRES: `store` is safe for concurrent Commit calls; `powered` may be
// called from any thread.
void CommitFromThreads(Store* store, const std::function<bool()>& powered,
                       std::vector<std::vector<BurstCommit>>* shares);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_BURST_H_
