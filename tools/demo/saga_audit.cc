// Copyright (c) edge-outbox authors.

#include "tools/demo/saga_audit.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/expr/step_id.h"
#include "tools/json_fields.h"

namespace outbox::demo {
namespace {

constexpr int kHighRisk = 50;  // the workflow's billing condition: lt 50

// Collects the violations of one sale.
class Checker {
 public:
  explicit Checker(const SagaSale& sale) : sale_(sale) {}

  void Fail(absl::string_view check, absl::string_view what) {
    out_.push_back(absl::StrCat(sale_.sale, ": ", check, ": ", what));
  }
  std::vector<std::string> Take() { return std::move(out_); }

  // The calls of `step` (or of its revert), in log order.
  std::vector<const SagaCall*> Of(absl::string_view step, bool revert) const {
    std::vector<const SagaCall*> calls;
    for (const SagaCall& c : sale_.calls) {
      if (c.step == step && c.revert == revert) calls.push_back(&c);
    }
    return calls;
  }
  // Its last 2xx request; nullptr if none.
  const audit::SinkRequest* Answered(absl::string_view step,
                                     bool revert) const {
    const audit::SinkRequest* last = nullptr;
    for (const SagaCall* c : Of(step, revert)) {
      if (c->request.ok()) last = &c->request;
    }
    return last;
  }
  const SagaSale& sale() const { return sale_; }

 private:
  const SagaSale& sale_;
  std::vector<std::string> out_;
};

std::string Seq(const audit::SinkRequest& r) {
  return absl::StrCat("request seq ", r.seq, " (", r.method, " ", r.path, ")");
}

int StepIndex(absl::string_view step) {
  for (int i = 0; i < 4; ++i) {
    if (step == kSagaSteps[i]) return i;
  }
  return -1;
}

bool Compensated(SagaOutcome o) {
  return o == SagaOutcome::kFailedCompensated ||
         o == SagaOutcome::kCancelCompensated;
}

void CheckRequests(Checker* c) {
  std::map<std::string, std::string> target;  // id -> "METHOD path"
  std::map<std::string, bool> processed;      // id -> answered or dropped
  for (const SagaCall& call : c->sale().calls) {
    const audit::SinkRequest& r = call.request;
    if (!r.signature_valid) c->Fail("signature", Seq(r) + " is not signed");
    const std::string where = absl::StrCat(r.method, " ", r.path);
    auto [it, first] = target.emplace(r.id, where);
    if (!first && it->second != where) {
      c->Fail("one_target",
              absl::StrCat(call.step, call.revert ? " revert" : "", " went to ",
                           it->second, " and to ", Seq(r),
                           " under one webhook-id"));
    }
    if (r.duplicate && !processed[r.id]) {
      c->Fail("duplicate_without_first",
              Seq(r) +
                  " was flagged a duplicate, but no earlier request "
                  "under its webhook-id was processed");
    }
    if (r.ok() || r.dropped) processed[r.id] = true;
  }
}

void CheckForwardOrder(Checker* c) {
  int reached = -1;
  std::vector<bool> answered(4, false);
  for (const SagaCall& call : c->sale().calls) {
    if (call.revert) continue;
    const int i = StepIndex(call.step);
    if (i < reached) {
      c->Fail("forward_order",
              absl::StrCat(Seq(call.request), ", step ", call.step,
                           ", came after ", kSagaSteps[reached], " began"));
    }
    if (i > 0 && !answered[i - 1] && i != reached) {
      c->Fail(
          "forward_order",
          absl::StrCat(call.step, " began (", Seq(call.request), ") before ",
                       kSagaSteps[i - 1], " was answered 2xx"));
    }
    reached = std::max(reached, i);
    if (call.request.ok()) answered[i] = true;
  }
}

void CheckForwardOutcome(Checker* c) {
  const bool fails = c->sale().expected == SagaOutcome::kFailedCompensated;
  for (int i = 0; i < 4; ++i) {
    const bool billing = i == 3;
    const bool ok = c->Answered(kSagaSteps[i], false) != nullptr;
    if (billing && fails) {
      if (ok) c->Fail("billing_not_failed", "billing was answered 2xx");
      bool refused = false;
      for (const SagaCall* call : c->Of("billing", false)) {
        refused = refused ||
                  (call->request.status >= 400 && call->request.status < 500);
      }
      if (!refused) c->Fail("billing_not_failed", "billing got no 4xx answer");
    } else if (!ok) {
      c->Fail("step_missing",
              absl::StrCat(kSagaSteps[i], " was never answered 2xx"));
    }
  }
}

void CheckRoutes(Checker* c) {
  const audit::SinkRequest* fraud = c->Answered("fraud", false);
  int risk = -1;
  if (fraud != nullptr &&
      !absl::SimpleAtoi(JsonField(fraud->response, "riskScore").value_or(""),
                        &risk)) {
    c->Fail("billing_route", "the fraud check's answer has no riskScore");
  }
  for (const SagaCall* call : c->Of("billing", false)) {
    const std::string want =
        risk < kHighRisk ? "/api/billing" : "/api/high-value-processing";
    if (risk >= 0 && call->request.path != want) {
      c->Fail("billing_route",
              absl::StrCat(Seq(call->request), " for riskScore ", risk,
                           "; want ", want));
    }
  }
  for (const SagaCall* call : c->Of("shipping", false)) {
    const std::string want = absl::StrCat(
        "/api/", JsonString(call->request.body, "shippingType"), "-shipping");
    if (call->request.path != want) {
      c->Fail("shipping_route",
              absl::StrCat(Seq(call->request), "; want ", want));
    }
  }
}

// The revert path the step's answer dictates, "" if it has no such id.
std::string RevertPath(const Checker& c, absl::string_view step) {
  const audit::SinkRequest* done = c.Answered(step, false);
  if (done == nullptr) return "";
  if (step == "reserve") {
    const std::string id = JsonString(done->response, "reservationId");
    return id.empty() ? "" : absl::StrCat("/api/inventory/", id, "/release");
  }
  const std::string id = JsonString(done->response, "shipmentId");
  return id.empty() ? "" : absl::StrCat(done->path, "/", id, "/cancel");
}

void CheckRevertsOf(Checker* c, absl::string_view step, const char* method) {
  const std::string want = RevertPath(*c, step);
  for (const SagaCall* call : c->Of(step, true)) {
    if (call->request.method != method || call->request.path != want) {
      c->Fail("revert_id", absl::StrCat(Seq(call->request), "; want ", method,
                                        " ", want.empty() ? "(no id)" : want,
                                        " from ", step, "'s answer"));
    }
  }
  if (c->Answered(step, true) == nullptr) {
    c->Fail("revert_missing", absl::StrCat(step, " was never reverted"));
  }
}

void CheckReverts(Checker* c) {
  for (const char* step : {"fraud", "billing"}) {
    for (const SagaCall* call : c->Of(step, true)) {
      c->Fail(absl::StrCat(step, "_reverted"), Seq(call->request));
    }
  }
  if (!Compensated(c->sale().expected)) {
    for (const char* step : {"reserve", "shipping"}) {
      for (const SagaCall* call : c->Of(step, true)) {
        c->Fail("reverted_completed", Seq(call->request));
      }
    }
    return;
  }
  CheckRevertsOf(c, "shipping", "POST");
  CheckRevertsOf(c, "reserve", "DELETE");
  const std::vector<const SagaCall*> release = c->Of("reserve", true);
  for (const SagaCall* cancel : c->Of("shipping", true)) {
    if (!release.empty() && cancel->request.seq > release[0]->request.seq) {
      c->Fail("revert_order",
              absl::StrCat("the shipping cancel (", Seq(cancel->request),
                           ") came after the inventory release (",
                           Seq(release[0]->request), ")"));
    }
  }
}

void CheckAfterCompensation(Checker* c) {
  const SagaCall* first_revert = nullptr;
  for (const SagaCall& call : c->sale().calls) {
    if (call.revert && first_revert == nullptr) first_revert = &call;
    if (!call.revert && first_revert != nullptr) {
      c->Fail("call_after_compensation",
              absl::StrCat(Seq(call.request), " after compensation began (",
                           Seq(first_revert->request), ")"));
    }
  }
}

void CheckStore(Checker* c) {
  const SagaSale& s = c->sale();
  const SagaOutcome stored = StoredOutcome(s.stored);
  if (stored != s.expected) {
    c->Fail("outcome", absl::StrCat("want ", OutcomeName(s.expected),
                                    ", the till's store says ", s.stored.phase,
                                    s.stored.cancelled ? " (cancelled)" : ""));
  }
  for (const auto& [step, key] :
       {std::pair<const char*, const char*>{"reserve", "reservationId"},
        {"shipping", "shipmentId"}}) {
    const audit::SinkRequest* done = c->Answered(step, false);
    const auto kept = s.stored.responses.find(step);
    if (done == nullptr) continue;
    const std::string logged = JsonString(done->response, key);
    if (kept == s.stored.responses.end() ||
        JsonString(kept->second, key) != logged) {
      c->Fail("store_response",
              absl::StrCat("the store's ", step, " answer ", "does not hold ",
                           key, " ", logged, " the receiver sent"));
    }
  }
}

}  // namespace

std::string OutcomeName(SagaOutcome outcome) {
  switch (outcome) {
    case SagaOutcome::kCompleted:
      return "completed";
    case SagaOutcome::kFailedCompensated:
      return "compensated after billing failed";
    case SagaOutcome::kCancelCompensated:
      return "compensated after cancel";
    case SagaOutcome::kNeedsAttention:
      break;
  }
  return "needs attention";
}

SagaIds::SagaIds(const std::vector<std::string>& event_ids) {
  for (size_t i = 0; i < event_ids.size(); ++i) {
    for (const char* step : kSagaSteps) {
      for (const bool revert : {false, true}) {
        owners_[workflow::StepRequestId(event_ids[i], step, revert)] = {i, step,
                                                                        revert};
      }
    }
  }
}

const SagaIds::Owner* SagaIds::Find(const std::string& webhook_id) const {
  const auto it = owners_.find(webhook_id);
  return it == owners_.end() ? nullptr : &it->second;
}

SagaOutcome StoredOutcome(const StoredWorkflow& stored) {
  if (stored.phase == "completed") return SagaOutcome::kCompleted;
  if (stored.phase != "compensated") return SagaOutcome::kNeedsAttention;
  return stored.cancelled ? SagaOutcome::kCancelCompensated
                          : SagaOutcome::kFailedCompensated;
}

std::vector<std::string> AuditSagaSale(const SagaSale& sale) {
  Checker c(sale);
  CheckRequests(&c);
  CheckForwardOrder(&c);
  CheckForwardOutcome(&c);
  CheckRoutes(&c);
  CheckReverts(&c);
  CheckAfterCompensation(&c);
  CheckStore(&c);
  return c.Take();
}

}  // namespace outbox::demo
