// Copyright (c) edge-outbox authors.
//
// WorkflowModel::CheckStored: each workflow as a reopened store holds it,
// against what the receiver got and what the ledger knows was durable.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/crash/soak_workflows.h"

namespace outbox::testing {
namespace {

using storage::WorkflowPhase;
using storage::WorkflowState;

const char* PhaseName(WorkflowPhase phase) {
  switch (phase) {
    case storage::WORKFLOW_PHASE_FORWARD:
      return "forward";
    case storage::WORKFLOW_PHASE_COMPENSATING:
      return "compensating";
    case storage::WORKFLOW_PHASE_COMPLETED:
      return "completed";
    case storage::WORKFLOW_PHASE_COMPENSATED:
      return "compensated";
    case storage::WORKFLOW_PHASE_NEEDS_ATTENTION:
      return "needs-attention";
    default:
      return "not started";
  }
}

const char* WhereName(WorkflowModel::Where where) {
  switch (where) {
    case WorkflowModel::Where::kPending:
      return "pending";
    case WorkflowModel::Where::kDead:
      return "dead-lettered";
    case WorkflowModel::Where::kGone:
      return "gone from the queue";
  }
  return "?";
}

bool IsFinal(WorkflowPhase phase) {
  return phase == storage::WORKFLOW_PHASE_COMPLETED ||
         phase == storage::WORKFLOW_PHASE_COMPENSATED ||
         phase == storage::WORKFLOW_PHASE_NEEDS_ATTENTION;
}

// The step got its 2xx: done, and maybe reverted since.
bool Answered(storage::StepStatus status) {
  return status == storage::STEP_STATUS_DONE ||
         status == storage::STEP_STATUS_REVERTED ||
         status == storage::STEP_STATUS_NO_REVERT ||
         status == storage::STEP_STATUS_REVERT_FAILED;
}

}  // namespace

uint64_t WorkflowModel::CheckStored(
    Store* store, absl::FunctionRef<Where(const std::string&)> where,
    size_t receipts, size_t rolling, AckLedger* acks,
    std::vector<Violation>* out) {
  const uint64_t before = checks_;
  // Those finished before this check, round robin; the running ones all.
  const size_t finished = finished_.size();
  const size_t n = std::min(rolling, finished);
  for (size_t i = 0; i < n; ++i) {
    WorkflowEvent& e = events_[finished_[rolling_next_++ % finished]];
    if (e.finished) CheckEvent(store, where(e.id), receipts, acks, &e, out);
  }
  std::vector<std::string> running;
  for (const std::string& id : running_) {
    WorkflowEvent& e = events_[id];
    if (e.finished) continue;  // listed twice (a cancel requeued it)
    CheckEvent(store, where(id), receipts, acks, &e, out);
    if (e.finished) {
      finished_.push_back(id);
    } else {
      running.push_back(id);
    }
  }
  running_ = std::move(running);
  return checks_ - before;
}

void WorkflowModel::CheckEvent(Store* store, Where where, size_t receipts,
                               AckLedger* acks, WorkflowEvent* e,
                               std::vector<Violation>* out) {
  ++checks_;
  absl::StatusOr<WorkflowRecord> record = store->GetWorkflow(e->id);
  if (!record.ok() && !absl::IsNotFound(record.status())) {
    out->push_back({ViolationKind::kUnexpectedError,
                    absl::StrCat("reading workflow ", e->id, ": ",
                                 record.status().ToString())});
    return;
  }
  WorkflowState state;
  if (record.ok() && !state.ParseFromString(record->state)) {
    out->push_back({ViolationKind::kWorkflowStateWrong,
                    absl::StrCat("the stored workflow of event ", e->id,
                                 " does not decode")});
    return;
  }
  const bool cancelled = record.ok() && record->cancelled;
  if (e->cancelled && !cancelled) {
    out->push_back({ViolationKind::kLostCommit,
                    absl::StrCat("the committed cancel of workflow event ",
                                 e->id, " is gone")});
  } else if (!e->cancelled && cancelled) {
    out->push_back({ViolationKind::kResurrected,
                    absl::StrCat("workflow event ", e->id,
                                 " is cancelled, but no committed "
                                 "transaction cancelled it")});
  }
  CheckPlace(*e, where, state, cancelled, out);
  CheckSteps(*e, state, cancelled, out);
  CheckResults(*e, state, receipts, acks, out);

  const WorkflowPhase phase = state.phase();
  e->phase = phase;
  e->left_as_delivered =
      where == Where::kGone &&
      ((phase == storage::WORKFLOW_PHASE_COMPLETED && !cancelled) ||
       (phase == storage::WORKFLOW_PHASE_COMPENSATED && state.cancelled()));
  // Completed, it left as delivered (and keeps its entry for a cancel);
  // compensated after a cancel, it left as delivered again.
  e->deliveries =
      (state.has_entry() ? 1 : 0) +
      (phase == storage::WORKFLOW_PHASE_COMPENSATED && state.cancelled() ? 1
                                                                         : 0);
  e->finished = where != Where::kPending && IsFinal(phase);
  if (where == Where::kPending && state.steps_size() > 0) ++resumed_;
}

// Where the event is fits its phase: running while pending, a dead letter
// once compensated after a failure or in need of attention, and gone once
// completed (unless cancelled since: then it must be queued again) or
// compensated after a cancel.
void WorkflowModel::CheckPlace(const WorkflowEvent& e, Where where,
                               const WorkflowState& state, bool cancelled,
                               std::vector<Violation>* out) const {
  const WorkflowPhase phase = state.phase();
  bool fits = false;
  switch (where) {
    case Where::kPending:
      fits = !IsFinal(phase) ||
             (phase == storage::WORKFLOW_PHASE_COMPLETED && cancelled);
      break;
    case Where::kDead:
      fits = (phase == storage::WORKFLOW_PHASE_COMPENSATED &&
              !state.cancelled()) ||
             phase == storage::WORKFLOW_PHASE_NEEDS_ATTENTION;
      break;
    case Where::kGone:
      // Gone while running is a lost event (SoakModel's checks say so); a
      // dead letter may have been purged.
      fits = !(phase == storage::WORKFLOW_PHASE_COMPLETED && cancelled);
      break;
  }
  if (fits) return;
  out->push_back(
      {ViolationKind::kWorkflowStateWrong,
       absl::StrCat("workflow event ", e.id, " is ", WhereName(where),
                    " while its workflow is ", PhaseName(phase),
                    state.cancelled() ? " (compensating a cancel)" : "",
                    cancelled ? ", and it is cancelled" : "")});
}

// What the stored steps say happened, the receiver saw: every step stored
// as answered got a 2xx whose body it keeps, every reverted one's revert a
// 2xx, every failed one at least a request; a workflow completed without a
// cancel had no revert, a compensated one has no step left undone, one that
// needs attention has a failed revert.
void WorkflowModel::CheckSteps(const WorkflowEvent& e,
                               const WorkflowState& state, bool cancelled,
                               std::vector<Violation>* out) const {
  auto wrong = [&](int step, absl::string_view what) {
    out->push_back(
        {ViolationKind::kWorkflowStateWrong,
         absl::StrCat("workflow event ", e.id, " (", PhaseName(state.phase()),
                      "): step ",
                      step < kSoakSteps ? kSoakWorkflow[step].name : "?", " ",
                      what)});
  };
  if (state.steps_size() > kSoakSteps) return wrong(kSoakSteps, "is extra");
  bool undone = false, revert_failed = false, any_revert = false;
  bool in_doubt = false;
  for (int k = 0; k < state.steps_size(); ++k) {
    const storage::WorkflowStepState& s = state.steps(k);
    const Seen& step = e.steps[k];
    const Seen& revert = e.reverts[k];
    any_revert = any_revert || revert.received;
    // Stored as rows, only the answers a reference reads are kept: a step
    // whose answer is not kept has none to compare (its result rows do).
    const bool kept = !state.rows() || s.answer_kept();
    if (Answered(s.status()) && kept &&
        !step.refs.contains(AnswerRef(s.response()))) {
      wrong(k,
            "is stored as answered 2xx with an answer the receiver never "
            "gave it");
    }
    if (state.rows() && Answered(s.status()) && !s.answer_kept() &&
        !s.response().empty()) {
      wrong(k, "is stored as rows with an answer nothing reads");
    }
    if (s.status() == storage::STEP_STATUS_REVERTED && revert.refs.empty()) {
      wrong(k, "is stored as reverted, but its revert never got a 2xx");
    }
    if (s.status() == storage::STEP_STATUS_FAILED && !step.received) {
      wrong(k, "is stored as failed, but the receiver never got it");
    }
    if (s.status() == storage::STEP_STATUS_REVERT_FAILED && !revert.received) {
      wrong(k,
            "is stored as failed to revert, but the receiver never got "
            "its revert");
    }
    const bool reverted = s.status() == storage::STEP_STATUS_REVERTED ||
                          s.status() == storage::STEP_STATUS_REVERT_FAILED;
    if (kSoakWorkflow[k].has_revert()
            ? s.status() == storage::STEP_STATUS_NO_REVERT
            : reverted) {
      wrong(k,
            "is stored as reverted, or as having no revert, against its "
            "configuration");
    }
    undone = undone || s.status() == storage::STEP_STATUS_DONE;
    in_doubt = in_doubt || s.status() == storage::STEP_STATUS_IN_DOUBT;
    revert_failed =
        revert_failed || s.status() == storage::STEP_STATUS_REVERT_FAILED;
  }
  const WorkflowPhase phase = state.phase();
  if (phase == storage::WORKFLOW_PHASE_COMPLETED && !cancelled && any_revert) {
    wrong(0, "and the others: completed, but the receiver got a revert");
  }
  if (phase == storage::WORKFLOW_PHASE_COMPENSATED && undone) {
    wrong(0, "or a later one: compensated with a step left done");
  }
  if (phase == storage::WORKFLOW_PHASE_NEEDS_ATTENTION && !revert_failed &&
      !in_doubt) {
    wrong(0,
          "and the others: needs attention without a failed revert or a "
          "step in doubt");
  }
  if (phase == storage::WORKFLOW_PHASE_COMPENSATED) {
    CheckAllReverted(e, state, out);
  }
}

// Compensated: every step with a revert that its receiver processed (even
// if the device never heard the 2xx: the answer lost, or a cut before its
// result was written) was reverted. Needing attention instead is allowed.
void WorkflowModel::CheckAllReverted(const WorkflowEvent& e,
                                     const WorkflowState& state,
                                     std::vector<Violation>* out) const {
  for (int k = 0; k < kSoakSteps; ++k) {
    if (!kSoakWorkflow[k].has_revert() || !e.steps[k].processed) continue;
    const storage::StepStatus status = k < state.steps_size()
                                           ? state.steps(k).status()
                                           : storage::STEP_STATUS_UNSPECIFIED;
    if (status == storage::STEP_STATUS_REVERTED) continue;
    out->push_back(
        {ViolationKind::kDoneNotReverted,
         absl::StrCat("workflow event ", e.id, " is compensated, but step ",
                      kSoakWorkflow[k].name,
                      ", which its receiver processed, is not reverted (",
                      storage::StepStatus_Name(status), ")")});
  }
}

// A durable result stays; a result the store shows is durable from now on.
void WorkflowModel::CheckResults(const WorkflowEvent& e,
                                 const WorkflowState& state, size_t receipts,
                                 AckLedger* acks,
                                 std::vector<Violation>* out) const {
  for (int k = 0; k < kSoakSteps; ++k) {
    const storage::StepStatus status = k < state.steps_size()
                                           ? state.steps(k).status()
                                           : storage::STEP_STATUS_UNSPECIFIED;
    for (bool revert : {false, true}) {
      if (revert && !kSoakWorkflow[k].has_revert()) continue;
      const bool stored =
          revert ? status == storage::STEP_STATUS_REVERTED : Answered(status);
      const std::string id = SoakStepRequestId(e.id, k, revert);
      const size_t durable = acks->ResultDurableAt(id);
      if (stored && durable == AckLedger::kNotDurable) {
        acks->OnResultStored(id, receipts);
      } else if (!stored && durable != AckLedger::kNotDurable) {
        out->push_back(
            {ViolationKind::kResultLost,
             absl::StrCat("workflow event ", e.id, ": the 2xx result of ",
                          revert ? "the revert of step " : "step ",
                          kSoakWorkflow[k].name, " was durable (by arrival ",
                          durable,
                          "), but the reopened store does not have it (",
                          PhaseName(state.phase()), ")")});
      }
    }
  }
}

}  // namespace outbox::testing
