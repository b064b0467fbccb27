// Copyright (c) edge-outbox authors.
//
// SoakModel: what the power-cut soak knows about the outbox across power
// cuts (every transaction it tried to commit and how that ended, what the
// receiver got), and the checks it runs against a reopened store. The
// invariant it checks is stated in power_cut_soak_test.cc.

#ifndef OUTBOX_TESTS_CRASH_SOAK_MODEL_H_
#define OUTBOX_TESTS_CRASH_SOAK_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/retry/retry_policy.h"
#include "outbox/store.h"
#include "outbox/txn.h"
#include "tests/crash/soak_acks.h"
#include "tests/crash/soak_disk.h"
#include "tests/crash/soak_violation.h"
#include "tests/crash/soak_workflows.h"
#include "tests/testing/recording_transport.h"

namespace outbox::testing {

// One transaction the workload tried to commit.
struct ModelTxn {
  enum class State {
    kInDoubt,    // Commit failed; the next reopen shows whether it is there
    kCommitted,  // Commit returned OK (not a duplicate), or a reopen showed it
    kAbsent,     // Commit failed and the reopen showed none of it
    kDuplicate,  // Commit returned duplicate: it must have written nothing
  };
  uint64_t serial = 0;  // names its records, see soak_records.h
  Txn txn;              // kept whole: a retry reuses its event ids
  std::vector<std::string> record_keys;
  std::string record_value;
  State state = State::kInDoubt;
  uint64_t commit_order = 0;  // of the Commit call that decided its state
  absl::Time commit_time;     // the store clock (StoreClockNow) at that call
  int cycle = 0;              // of that call
  bool acknowledged = false;  // a Commit of it returned OK
  // Every event delivered (2xx) or purged as a dead letter, and not in the
  // store: from then on only the rolling check looks at it.
  bool settled = false;
};

// Thread-compatible: the soak updates it from its one thread (commits made
// from other threads are reported once those threads are joined).
class SoakModel {
 public:
  // `max_attempts` is the agent's RetryPolicy::max_attempts: dead letters
  // with fewer attempts must have been rejected for good by the receiver.
  explicit SoakModel(int max_attempts = RetryPolicy().max_attempts)
      : max_attempts_(max_attempts) {}

  // Registers `txn` before it is committed; returns its index.
  size_t Add(ModelTxn txn);
  ModelTxn& txn(size_t index) { return txns_[index]; }
  size_t txn_count() const { return txns_.size(); }

  // Records how a Commit of txn `index` ended. `order` numbers Commit calls;
  // `now` is the store's clock; `power_on` is whether the file system was
  // alive after the call (a failure with the power on is itself reported).
  void OnCommit(size_t index, const absl::StatusOr<CommitResult>& result,
                uint64_t order, absl::Time now, int cycle, bool power_on,
                std::vector<Violation>* out);

  // Idempotency keys of committed transactions, newest last, with the time
  // they were committed: what a repeat may reuse.
  const std::vector<std::pair<absl::Time, std::string>>& committed_keys()
      const {
    return committed_keys_;
  }
  // The committed owner of `key`, or -1.
  int64_t OwnerOf(const std::string& key) const;

  // Before PurgeDeadLetters(older_than): the dead letters (as listed just
  // before, no clock moving between) that the purge may delete, dead for
  // longer than `older_than` on the store clock, are allowed to vanish.
  void AllowPurge(const std::vector<DeadLetter>& dead,
                  absl::Duration older_than);

  // Dead letters in the order of their transactions' serials (not their
  // random ids), so that a seed picks the same one every run.
  std::vector<std::string> SortBySerial(
      const std::vector<DeadLetter>& dead) const;

  // Transactions that the last Check() settled as absent: safe to retry.
  const std::vector<size_t>& resolved_absent() const {
    return resolved_absent_;
  }
  // In-doubt keyed transactions the last Check() found committed: a retry
  // must be answered as a duplicate.
  const std::vector<size_t>& resolved_committed() const {
    return resolved_committed_;
  }

  // Acknowledgements, as the soak's ObservedStore reports them.
  AckLedger* acks() { return &acks_; }
  // The workflow events among the transactions' (kSoakWorkflowType).
  const WorkflowModel& workflows() const { return workflows_; }

  // Runs every check against the freshly reopened `store`, what its files
  // held before it opened (`disk`) and the receiver's `log` (the part not
  // seen by earlier calls), appending what it finds. `rolling` transactions
  // out of the checks' way (settled, duplicate, absent) are re-read per
  // call, round robin; SIZE_MAX re-reads all. Returns the number of event
  // checks made.
  uint64_t Check(Store* store, const DiskState& disk,
                 const std::vector<ReceivedRequest>& log, size_t rolling,
                 std::vector<Violation>* out);

 private:
  struct ModelEvent {
    size_t txn = 0;
    size_t index = 0;             // in the txn's events
    bool acked = false;           // the agent got a 2xx for it
    bool first_received = false;  // the receiver has seen it
    bool purge_allowed = false;
    bool workflow = false;  // of kSoakWorkflowType: WorkflowModel knows more
  };
  // What one check read from the store.
  struct StoreView {
    Store* store;
    absl::flat_hash_map<std::string, const PendingEvent*> pending;
    absl::flat_hash_map<std::string, const DeadLetter*> dead;
    bool Holds(const std::string& id) const {
      return pending.contains(id) || dead.contains(id);
    }
  };
  // Presence of one transaction's parts in the store.
  struct Presence {
    size_t records = 0;    // records present with the expected value
    size_t in_store = 0;   // events pending or dead
    size_t accounted = 0;  // events in store, delivered or purged
  };

  Presence Look(const StoreView& view, const ModelTxn& txn,
                std::vector<Violation>* out);
  void ResolveInDoubt(const StoreView& view, std::vector<Violation>* out);
  // Txn `index` is committed: its workflow events run, its cancels count
  // (a cancelled workflow that had completed is queued again, so its
  // transaction is open again).
  void OnCommitted(size_t index);
  // Whether `r` may have been sent: its transaction committed.
  void CheckSent(const ReceivedRequest& r, const ModelTxn& t,
                 std::vector<Violation>* out) const;
  void CheckWorkflowReceipt(const ReceivedRequest& r,
                            const WorkflowModel::Request& request,
                            std::vector<Violation>* out);
  static uint64_t CheckStoredCounters(const DiskState& disk,
                                      std::vector<Violation>* out);
  uint64_t CheckReceipts(const std::vector<ReceivedRequest>& log,
                         std::vector<Violation>* out);
  uint64_t CheckStoredEvents(const StoreView& view,
                             std::vector<Violation>* out);
  void CheckGaveUp(const DeadLetter& dead, std::vector<Violation>* out) const;
  uint64_t CheckOpenTxns(const StoreView& view, std::vector<Violation>* out);
  uint64_t CheckSettledTxns(const StoreView& view, size_t rolling,
                            std::vector<Violation>* out);
  void MakeOwner(size_t index, std::vector<Violation>* out);
  static std::string Describe(const ModelTxn& txn);

  const int max_attempts_;
  std::vector<ModelTxn> txns_;
  AckLedger acks_;
  WorkflowModel workflows_;
  absl::flat_hash_map<std::string, ModelEvent> events_;  // by event id
  absl::flat_hash_map<std::string, size_t> owners_;  // idempotency key -> txn
  std::vector<std::pair<absl::Time, std::string>> committed_keys_;
  std::vector<size_t> in_doubt_;
  std::vector<size_t> open_;  // committed or duplicate, not settled
  // Settled, duplicate and absent transactions, in rolling-check order.
  std::vector<size_t> settled_;
  size_t rolling_next_ = 0;
  std::vector<size_t> resolved_absent_;
  std::vector<size_t> resolved_committed_;
  size_t log_seen_ = 0;
  // Per ordering key, the commit position (order, index) of the newest
  // event the receiver has seen for the first time.
  std::map<std::string, std::pair<uint64_t, size_t>> last_first_receipt_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_MODEL_H_
