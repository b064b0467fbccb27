// Copyright (c) edge-outbox authors.
//
// The power-cut soak's workflows: the workflow its agent runs (three steps,
// two with a revert), and WorkflowModel, what the soak knows of each
// workflow event (what the receiver got for its steps and reverts, what the
// store showed after each reopen) and the workflow checks it runs
// (power_cut_soak_test.cc states them, 13-18). Durability comes from the
// AckLedger: a step's (or revert's) 2xx result is durable once a synced
// write covered it, or once a reopen showed it stored.

#ifndef OUTBOX_TESTS_CRASH_SOAK_WORKFLOWS_H_
#define OUTBOX_TESTS_CRASH_SOAK_WORKFLOWS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "outbox/store.h"
#include "proto/storage.pb.h"
#include "tests/crash/soak_acks.h"
#include "tests/crash/soak_violation.h"
#include "tests/testing/recording_transport.h"

namespace outbox::testing {

// Events of this type run the soak's workflow.
inline constexpr char kSoakWorkflowType[] = "sale.workflow";

// Its steps, in order: each is sent to http://receiver.test/wf/<name>; a
// step with a revert is undone with a request to
// http://receiver.test/wf/<name>/<ref>/undo whose body names the event
// ({"txn": <serial>, "n": <index>}), <ref> being the "ref" of the step's
// stored 2xx answer (Receiver). A failure at "notify" reverts "ship", then
// "reserve"; a cancel after it completed skips "notify", which has none.
struct SoakStep {
  const char* name;
  const char* revert_method;  // null: the step has no revert
  bool has_revert() const { return revert_method != nullptr; }
};
inline constexpr int kSoakSteps = 3;
inline constexpr SoakStep kSoakWorkflow[kSoakSteps] = {
    {"reserve", "DELETE"}, {"ship", "POST"}, {"notify", nullptr}};
// The most requests one workflow needs with every answer 2xx: its steps, a
// step in doubt resent, then its reverts.
inline constexpr int kSoakWorkflowRequests = kSoakSteps + 1 + 2;

// The destinations and the workflows { } block of the soak agent's
// configuration.
std::string SoakWorkflowConfig();

// Figures of one soak run (SoakReport prints them).
struct WorkflowCounts {
  uint64_t events = 0;   // workflow events committed
  uint64_t cancels = 0;  // of those, cancelled by a committed Txn::Cancel
  uint64_t steps = 0;    // step requests the receiver got
  uint64_t reverts = 0;  // revert requests the receiver got
  uint64_t resumed = 0;  // workflows a reopen found half-way, summed
  uint64_t checks = 0;   // workflow checks made
  // How the workflows stood at the last check.
  uint64_t completed = 0;
  uint64_t compensated = 0;
  uint64_t needs_attention = 0;
  uint64_t running = 0;  // pending: not started, forward or compensating
  // Filled in by the soak: cycles in which the receiver got a workflow
  // request, and cycles whose power went at a workflow crash point.
  uint64_t cycles = 0;
  uint64_t cuts = 0;
};

// Thread-compatible: SoakModel drives it from the soak's one thread.
class WorkflowModel {
 public:
  // One request id of a workflow event: a step's or a revert's.
  struct Request {
    std::string event_id;
    int step = 0;
    bool revert = false;
  };
  // Where a reopen found a workflow event.
  enum class Where { kPending, kDead, kGone };

  // Event `id`, the `index`-th of the transaction with `serial`, runs the
  // workflow (it is not committed yet).
  void AddEvent(const std::string& id, uint64_t serial, size_t index);
  bool IsWorkflowEvent(const std::string& id) const {
    return events_.contains(id);
  }
  // The step or revert `request_id` (a webhook-id) belongs to, or null.
  const Request* FindRequest(const std::string& request_id) const;

  // Its transaction is committed: from now on its stored workflow is
  // checked after every reopen.
  void OnCommitted(const std::string& id);
  // A committed transaction cancels it (the first cancel wins; repeating
  // one is a no-op).
  void OnCancelCommitted(const std::string& id);
  // The most recent committed workflow events not cancelled yet, oldest
  // first: what a new transaction may cancel.
  const std::vector<std::string>& cancel_candidates() const {
    return cancel_candidates_;
  }

  // Checks receipt `r` of `request` (the invariants about what the receiver
  // gets: 13, 15, 16, 17 and the answers 18 relies on), against the
  // durability `acks` knows. Call in arrival order.
  void OnReceipt(const ReceivedRequest& r, const Request& request,
                 const AckLedger& acks, std::vector<Violation>* out);

  // After a reopen: checks the stored workflow of every committed workflow
  // event still running (and `rolling` finished ones, round robin; SIZE_MAX:
  // all) against what the receiver got (18), that durable results stayed
  // (14), and tells `acks` which results the store shows (durable from
  // `receipts`, the receiver's log size, on). `where` says where the
  // reopened store has an event. Returns the checks made.
  uint64_t CheckStored(Store* store,
                       absl::FunctionRef<Where(const std::string&)> where,
                       size_t receipts, size_t rolling, AckLedger* acks,
                       std::vector<Violation>* out);
  // As the last CheckStored saw it: whether event `id` left the queue as
  // delivered (completed, or compensated after a cancel).
  bool LeftAsDelivered(const std::string& id) const;
  // How often workflow events left the queue as delivered, as the stores
  // CheckStored read show it (its share of delivered_total).
  uint64_t deliveries() const;

  // The figures; the standing of the workflows as the last check saw it.
  WorkflowCounts counts() const;

 private:
  // What the receiver got for one request id.
  struct Seen {
    bool received = false;
    // The receiver acted on it: answered kOk, or lost that answer.
    bool processed = false;
    uint64_t first_arrival = 0;
    absl::flat_hash_set<std::string> refs;  // of its 2xx answers
  };
  struct WorkflowEvent {
    std::string id;
    uint64_t serial = 0;
    size_t index = 0;
    bool committed = false;
    bool cancelled = false;
    std::array<Seen, kSoakSteps> steps;
    std::array<Seen, kSoakSteps> reverts;
    bool reverting = false;             // the receiver got a revert of it
    int last_revert_step = kSoakSteps;  // of the latest first revert
    // As the last CheckStored found it.
    storage::WorkflowPhase phase = storage::WORKFLOW_PHASE_UNSPECIFIED;
    bool left_as_delivered = false;
    uint64_t deliveries = 0;
    bool finished = false;  // not pending, and its phase is final
  };

  void CheckRequest(const ReceivedRequest& r, const Request& request,
                    const WorkflowEvent& e, std::vector<Violation>* out) const;
  void CheckFirstStep(const ReceivedRequest& r, const Request& request,
                      const WorkflowEvent& e, const AckLedger& acks,
                      std::vector<Violation>* out) const;
  void CheckFirstRevert(const ReceivedRequest& r, const Request& request,
                        const WorkflowEvent& e, const AckLedger& acks,
                        std::vector<Violation>* out) const;
  // CheckStored for one event.
  void CheckEvent(Store* store, Where where, size_t receipts, AckLedger* acks,
                  WorkflowEvent* e, std::vector<Violation>* out);
  void CheckPlace(const WorkflowEvent& e, Where where,
                  const storage::WorkflowState& state, bool cancelled,
                  std::vector<Violation>* out) const;
  void CheckSteps(const WorkflowEvent& e, const storage::WorkflowState& state,
                  bool cancelled, std::vector<Violation>* out) const;
  void CheckAllReverted(const WorkflowEvent& e,
                        const storage::WorkflowState& state,
                        std::vector<Violation>* out) const;
  void CheckResults(const WorkflowEvent& e, const storage::WorkflowState& state,
                    size_t receipts, AckLedger* acks,
                    std::vector<Violation>* out) const;

  absl::flat_hash_map<std::string, WorkflowEvent> events_;  // by event id
  absl::flat_hash_map<std::string, Request> requests_;      // by request id
  std::vector<std::string> running_;   // committed, not finished
  std::vector<std::string> finished_;  // in rolling-check order
  size_t rolling_next_ = 0;
  std::vector<std::string> cancel_candidates_;
  uint64_t cancels_ = 0;
  uint64_t steps_received_ = 0;
  uint64_t reverts_received_ = 0;
  uint64_t resumed_ = 0;
  uint64_t checks_ = 0;
};

// The "ref" a 2xx answer's body names (Receiver), or "".
std::string AnswerRef(absl::string_view body);

// The step id of request `step` (a revert's if `revert`) of event `id`, as
// the agent sends it (agent/expr/step_id.h).
std::string SoakStepRequestId(const std::string& id, int step, bool revert);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_WORKFLOWS_H_
