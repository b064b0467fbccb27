// Copyright (c) edge-outbox authors.
//
// WorkflowModel bookkeeping and its checks of what the receiver got. The
// checks of the stored workflows after a reopen are in
// soak_workflow_checks.cc.

#include "tests/crash/soak_workflows.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/expr/step_id.h"
#include "nlohmann/json.hpp"

namespace outbox::testing {
namespace {

constexpr char kBase[] = "http://receiver.test/wf/";
// The candidates for a cancel kept (MakeSoakTxn picks among the last few).
constexpr size_t kCancelCandidates = 64;

std::string StepUrl(int step) {
  return absl::StrCat(kBase, kSoakWorkflow[step].name);
}

// A revert's payload template {"txn": ..., "n": ...}, filled from the step's
// request (the event's payload, SoakPayload), escaped for the text format.
constexpr char kRevertPayload[] =
    R"({\"txn\": {{request:/txn}}, \"n\": {{request:/n}}})";

std::string Describe(const WorkflowModel::Request& request) {
  return absl::StrCat(request.revert ? "revert of step " : "step ",
                      kSoakWorkflow[request.step].name, " of workflow event ",
                      request.event_id);
}

}  // namespace

// The "ref" a 2xx answer's body names (Receiver), or "".
std::string AnswerRef(absl::string_view body) {
  const nlohmann::json answer = nlohmann::json::parse(body, nullptr, false);
  if (!answer.is_object() || !answer.contains("ref") ||
      !answer["ref"].is_string()) {
    return "";
  }
  return answer["ref"].get<std::string>();
}

std::string SoakWorkflowConfig() {
  std::string config;
  for (const SoakStep& step : kSoakWorkflow) {
    absl::StrAppend(&config, "destinations { name: \"", step.name, "\" url: \"",
                    kBase, step.name, "\" }\n");
  }
  absl::StrAppend(&config, "workflows {\n  event_type: \"", kSoakWorkflowType,
                  "\"\n");
  for (const SoakStep& step : kSoakWorkflow) {
    absl::StrAppend(&config, "  steps { name: \"", step.name,
                    "\" destination: \"", step.name, "\"");
    if (step.has_revert()) {
      absl::StrAppend(&config, "\n    revert { url: \"", kBase, step.name,
                      "/{{response:", step.name, ":/ref}}/undo\" method: \"",
                      step.revert_method, "\" payload: \"", kRevertPayload,
                      "\" }");
    }
    absl::StrAppend(&config, " }\n");
  }
  absl::StrAppend(&config, "}\n");
  return config;
}

std::string SoakStepRequestId(const std::string& id, int step, bool revert) {
  return workflow::StepRequestId(id, kSoakWorkflow[step].name, revert);
}

void WorkflowModel::AddEvent(const std::string& id, uint64_t serial,
                             size_t index) {
  WorkflowEvent& e = events_[id];
  e.id = id;
  e.serial = serial;
  e.index = index;
  for (int step = 0; step < kSoakSteps; ++step) {
    requests_[SoakStepRequestId(id, step, false)] = {id, step, false};
    if (kSoakWorkflow[step].has_revert()) {
      requests_[SoakStepRequestId(id, step, true)] = {id, step, true};
    }
  }
}

const WorkflowModel::Request* WorkflowModel::FindRequest(
    const std::string& request_id) const {
  auto it = requests_.find(request_id);
  return it == requests_.end() ? nullptr : &it->second;
}

void WorkflowModel::OnCommitted(const std::string& id) {
  WorkflowEvent& e = events_[id];
  if (e.committed) return;
  e.committed = true;
  running_.push_back(id);
  cancel_candidates_.push_back(id);
  if (cancel_candidates_.size() > kCancelCandidates) {
    cancel_candidates_.erase(cancel_candidates_.begin());
  }
}

void WorkflowModel::OnCancelCommitted(const std::string& id) {
  auto it = events_.find(id);
  if (it == events_.end() || it->second.cancelled) return;
  WorkflowEvent& e = it->second;
  e.cancelled = true;
  ++cancels_;
  cancel_candidates_.erase(
      std::remove(cancel_candidates_.begin(), cancel_candidates_.end(), id),
      cancel_candidates_.end());
  // A completed workflow is queued again: it runs until it is compensated.
  if (e.finished) {
    e.finished = false;
    running_.push_back(id);
  }
}

void WorkflowModel::OnReceipt(const ReceivedRequest& r, const Request& request,
                              const AckLedger& acks,
                              std::vector<Violation>* out) {
  WorkflowEvent& e = events_[request.event_id];
  CheckRequest(r, request, e, out);
  const std::string own = SoakStepRequestId(e.id, request.step, request.revert);
  Seen& seen = request.revert ? e.reverts[request.step] : e.steps[request.step];
  ++(request.revert ? reverts_received_ : steps_received_);
  if (!request.revert && e.reverting) {
    out->push_back({ViolationKind::kForwardAfterCompensation,
                    absl::StrCat(Describe(request), " arrived (", r.arrival,
                                 ") after the receiver got a revert of it")});
  }
  if (!seen.received) {
    if (request.revert) {
      CheckFirstRevert(r, request, e, acks, out);
      e.reverting = true;
      e.last_revert_step = request.step;
    } else {
      CheckFirstStep(r, request, e, acks, out);
    }
    seen.received = true;
    seen.first_arrival = r.arrival;
  } else if (acks.ResultDurableAt(own) <= r.arrival) {
    out->push_back(
        {request.revert ? ViolationKind::kRevertRepeated
                        : ViolationKind::kStepResent,
         absl::StrCat(Describe(request), " was sent again (arrival ", r.arrival,
                      ") after its 2xx result was durable (by ", "arrival ",
                      acks.ResultDurableAt(own), ")")});
  }
  if (r.answer == Answer::kOk) seen.refs.insert(AnswerRef(r.response));
  seen.processed = seen.processed || r.answer == Answer::kOk ||
                   r.answer == Answer::kLostAnswer;
}

// The request says what it is apart from its id: the URL names the step
// (and, for a revert, the answer it undoes) and a revert's body the event.
// A request sent under another's id, or built from an answer the receiver
// never gave to that step, fails here.
void WorkflowModel::CheckRequest(const ReceivedRequest& r,
                                 const Request& request, const WorkflowEvent& e,
                                 std::vector<Violation>* out) const {
  const std::string url = StepUrl(request.step);
  if (!request.revert) {
    if (r.url != url) {
      out->push_back({ViolationKind::kEventChanged,
                      absl::StrCat(Describe(request), " was sent to ", r.url,
                                   " (arrival ", r.arrival, ")")});
    }
    return;
  }
  const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
  const bool own_event = body.is_object() && body.contains("txn") &&
                         body.contains("n") && body["txn"] == e.serial &&
                         body["n"] == e.index;
  absl::string_view ref = r.url;
  const bool own_step = absl::ConsumePrefix(&ref, url + "/") &&
                        absl::ConsumeSuffix(&ref, "/undo") && !ref.empty();
  if (!own_event || !own_step) {
    out->push_back({ViolationKind::kRevertRepeated,
                    absl::StrCat(Describe(request), " arrived (", r.arrival,
                                 ") as ", r.method, " ", r.url,
                                 ": another revert's request under its id")});
  } else if (!e.steps[request.step].refs.contains(std::string(ref))) {
    out->push_back(
        {ViolationKind::kWorkflowStateWrong,
         absl::StrCat(Describe(request), " (arrival ", r.arrival,
                      ") undoes answer '", ref,
                      "', which the receiver never gave to the step")});
  }
}

// Forward: a step goes out only once the step before has a durable result.
void WorkflowModel::CheckFirstStep(const ReceivedRequest& r,
                                   const Request& request,
                                   const WorkflowEvent& e,
                                   const AckLedger& acks,
                                   std::vector<Violation>* out) const {
  if (request.step == 0) return;
  const size_t durable =
      acks.ResultDurableAt(SoakStepRequestId(e.id, request.step - 1, false));
  if (durable <= r.arrival) return;
  out->push_back(
      {ViolationKind::kStepNotDurable,
       absl::StrCat(Describe(request), " first arrived (", r.arrival,
                    ") before step ", kSoakWorkflow[request.step - 1].name,
                    "'s 2xx result was durable",
                    durable == AckLedger::kNotDurable
                        ? ""
                        : absl::StrCat(" (by arrival ", durable, ")"))});
}

// Compensation: last first, and each revert only once the later ones the
// receiver got have durable results.
void WorkflowModel::CheckFirstRevert(const ReceivedRequest& r,
                                     const Request& request,
                                     const WorkflowEvent& e,
                                     const AckLedger& acks,
                                     std::vector<Violation>* out) const {
  if (request.step >= e.last_revert_step) {
    out->push_back({ViolationKind::kRevertOrder,
                    absl::StrCat(Describe(request), " first arrived (",
                                 r.arrival, ") after the revert of step ",
                                 kSoakWorkflow[e.last_revert_step].name,
                                 ": not last first")});
  }
  for (int later = request.step + 1; later < kSoakSteps; ++later) {
    if (!e.reverts[later].received) continue;
    if (acks.ResultDurableAt(SoakStepRequestId(e.id, later, true)) <=
        r.arrival) {
      continue;
    }
    out->push_back(
        {ViolationKind::kStepNotDurable,
         absl::StrCat(Describe(request), " first arrived (", r.arrival,
                      ") before the revert of step ", kSoakWorkflow[later].name,
                      " had a durable 2xx result")});
  }
}

bool WorkflowModel::LeftAsDelivered(const std::string& id) const {
  auto it = events_.find(id);
  return it != events_.end() && it->second.left_as_delivered;
}

uint64_t WorkflowModel::deliveries() const {
  uint64_t n = 0;
  for (const auto& [id, e] : events_) n += e.deliveries;
  return n;
}

WorkflowCounts WorkflowModel::counts() const {
  WorkflowCounts c;
  c.cancels = cancels_;
  c.steps = steps_received_;
  c.reverts = reverts_received_;
  c.resumed = resumed_;
  c.checks = checks_;
  for (const auto& [id, e] : events_) {
    if (!e.committed) continue;
    ++c.events;
    switch (e.phase) {
      case storage::WORKFLOW_PHASE_COMPLETED:
        ++(e.finished ? c.completed : c.running);
        break;
      case storage::WORKFLOW_PHASE_COMPENSATED:
        ++c.compensated;
        break;
      case storage::WORKFLOW_PHASE_NEEDS_ATTENTION:
        ++c.needs_attention;
        break;
      default:
        ++c.running;
        break;
    }
  }
  return c;
}

}  // namespace outbox::testing
