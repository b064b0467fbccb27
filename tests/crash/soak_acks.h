// Copyright (c) edge-outbox authors.
//
// AckLedger: what the power-cut soak knows about acknowledgements (the
// agent's MarkDelivered calls) and how durable each one is, across cuts.
//
// An acknowledgement is *covered* once a synced write that returned OK came
// after it returned: its own write, when that is synced, or any later one (a
// Commit with sync, the store's Close). A covered ack is durable: no reopen
// may show its event again, and the receiver must never get it again. An
// uncovered ack may be lost in a cut; its event is then pending again and
// goes out once more with the same id and body (SoakModel checks those).
// MarkDelivered's write is synced, so its ack is covered when it returns;
// the agent's Settle is unsynced and covered only by the next synced write.
//
// A workflow step's (or revert's) 2xx result, settled with the workflow's
// state, is tracked the same way: durable once covered, or once a reopen
// showed it stored (SoakModel's workflow checks judge the next step by it).
// So is a workflow's last settlement, the one that removes its event as
// delivered: once covered, no reopen may show the event pending again.
// Unless its workflow completed (rather than finished compensating) and a
// cancel was attempted for it: a cancel queues a completed workflow again,
// and one racing the last step keeps it queued.

#ifndef OUTBOX_TESTS_CRASH_SOAK_ACKS_H_
#define OUTBOX_TESTS_CRASH_SOAK_ACKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tests/crash/soak_disk.h"
#include "tests/crash/soak_violation.h"
#include "tests/testing/recording_transport.h"

namespace outbox::testing {

// Figures of one soak run (SoakReport prints them).
struct AckCounts {
  uint64_t returned = 0;        // MarkDelivered calls that returned OK
  uint64_t lost_uncovered = 0;  // of those, undone by a cut: allowed
  uint64_t confirmed = 0;       // events a reopen showed removed as delivered
  uint64_t total_checks = 0;    // delivered_total comparisons made
  // Workflow results: 2xx results of steps and reverts settled, covered by
  // a synced write, and undone by a cut while uncovered (allowed).
  uint64_t results_returned = 0;
  uint64_t results_covered = 0;
  uint64_t results_lost_uncovered = 0;
  // Workflow events' last settlements (removed as delivered) returned.
  uint64_t workflow_deliveries_returned = 0;
};

// Thread-compatible: the soak drives it from its one thread.
class AckLedger {
 public:
  // MarkDelivered(`id`) was called.
  void OnCalled(const std::string& id);
  // It returned OK; `synced` if its own write was synced. `receipts` is the
  // receiver's log size at that moment.
  void OnReturned(const std::string& id, bool synced, size_t receipts);
  // A synced write returned OK: every ack (and workflow result) that
  // returned before it is covered.
  void OnSyncedWrite(size_t receipts);

  // A Commit carrying a cancel of event `id` was attempted: from then on its
  // workflow's event may legitimately be pending again.
  void OnCancelAttempted(const std::string& id);
  // The agent's Settle returned, unsynced, removing workflow event `id` as
  // delivered: its workflow completed, or finished compensating (`final`,
  // so that no cancel may queue it again).
  void OnWorkflowDeliveryReturned(const std::string& id, bool final);

  // The agent's Settle returned, unsynced, with the 2xx result of workflow
  // request `request_id` (a step's or a revert's webhook-id).
  void OnResultReturned(const std::string& request_id);
  // A reopen showed that result stored, the receiver's log at `receipts`.
  void OnResultStored(const std::string& request_id, size_t receipts);
  // The store's durable mark, read by the agent, covers that result's write
  // (Store::DurableMark): durable from the receiver's log at `receipts`.
  void OnResultDurable(const std::string& request_id, size_t receipts);
  // The receiver's log size when the result of `request_id` became durable
  // (every arrival from there on came after), or kNotDurable.
  static constexpr size_t kNotDurable = SIZE_MAX;
  size_t ResultDurableAt(const std::string& request_id) const;

  // After a reopen, with `disk` read before the store opened and the
  // receiver's whole `log`: settles the acks made since the last call
  // (durable_ack_lost if a covered one is undone), checks the receipts not
  // seen before (durable_ack_lost for a send after a covered ack) and the
  // persisted delivered_total (delivered_total_wrong), of which
  // `workflow_deliveries` are workflow events leaving the queue (they take
  // no ack here). Forgets the workflow results still uncovered: the cut took
  // them, unless the reopen showed them (OnResultStored, called before).
  // Returns the number of checks made.
  uint64_t Check(const DiskState& disk, const std::vector<ReceivedRequest>& log,
                 uint64_t workflow_deliveries, std::vector<Violation>* out);

  const AckCounts& counts() const { return counts_; }

 private:
  struct Ack {
    bool returned = false;
    bool covered = false;
  };
  void Cover(const std::string& id, size_t receipts);
  void CheckDeliveredTotal(const DiskState& disk, uint64_t workflow_deliveries,
                           std::vector<Violation>* out);
  uint64_t CheckWorkflowDeliveries(const DiskState& disk,
                                   std::vector<Violation>* out);

  // Acks called since the last Check, by event id.
  absl::flat_hash_map<std::string, Ack> open_;
  std::vector<std::string> uncovered_;  // returned, not yet covered
  // Covered acks not undone: the receiver's log size when each was covered.
  // Any request for the event from that arrival on is a resend.
  absl::flat_hash_map<std::string, size_t> durable_;
  // Events a reopen showed gone after MarkDelivered was called for them:
  // what delivered_total must count, each once.
  absl::flat_hash_set<std::string> delivered_;
  absl::flat_hash_set<std::string> called_;       // ever, distinct
  absl::flat_hash_set<std::string> answered_ok_;  // receiver 2xx, distinct
  size_t log_seen_ = 0;
  // Workflow results returned and not yet covered, and the durable ones with
  // the receiver's log size when each became durable.
  std::vector<std::string> uncovered_results_;
  absl::flat_hash_map<std::string, size_t> durable_results_;
  // Workflow events settled as delivered since the last Check (covered or
  // not), those not covered yet, and the events a cancel was attempted for.
  struct WorkflowDelivery {
    bool final = false;
    bool covered = false;
  };
  absl::flat_hash_map<std::string, WorkflowDelivery> workflow_delivered_;
  std::vector<std::string> uncovered_workflow_deliveries_;
  absl::flat_hash_set<std::string> cancelled_;
  AckCounts counts_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_ACKS_H_
