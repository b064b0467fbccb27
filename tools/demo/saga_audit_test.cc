// Copyright (c) edge-outbox authors.
//
// Each check of the saga audit, fed a hand-made log that breaks it (and a
// clean one of each outcome, which must pass them all).

#include "tools/demo/saga_audit.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/expr/step_id.h"
#include "gtest/gtest.h"

namespace outbox::demo {
namespace {

SagaCall Call(const std::string& step, bool revert, const std::string& method,
              const std::string& path, int status,
              const std::string& body = "{}",
              const std::string& response = "{}") {
  SagaCall c;
  c.step = step;
  c.revert = revert;
  c.request.id = absl::StrCat(step, revert ? "/revert" : "");
  c.request.method = method;
  c.request.path = path;
  c.request.status = status;
  c.request.body = body;
  c.request.response = response;
  c.request.signature_valid = true;
  return c;
}

void Add(SagaSale* s, SagaCall call) {
  call.request.seq = static_cast<int64_t>(s->calls.size()) + 1;
  s->calls.push_back(std::move(call));
}

// Sale "saga-1": risk 70 (high value), international shipping.
SagaSale Clean(SagaOutcome outcome) {
  SagaSale s;
  s.sale = "saga-1";
  s.event_id = "e1";
  s.expected = outcome;
  Add(&s, Call("reserve", false, "POST", "/api/inventory/reserve", 200, "{}",
               R"({"reservationId":"RES-1"})"));
  Add(&s, Call("fraud", false, "POST", "/api/fraud/check", 200,
               R"({"riskScore":70})", R"({"riskScore":70,"checkId":"c"})"));
  Add(&s, Call("shipping", false, "POST", "/api/international-shipping", 200,
               R"({"shippingType":"international"})",
               R"({"shipmentId":"INTL-1"})"));
  const bool fails = outcome == SagaOutcome::kFailedCompensated;
  Add(&s, Call("billing", false, "POST", "/api/high-value-processing",
               fails ? 422 : 200));
  s.stored.phase = "completed";
  if (outcome != SagaOutcome::kCompleted) {
    Add(&s, Call("shipping", true, "POST",
                 "/api/international-shipping/INTL-1/cancel", 200));
    Add(&s,
        Call("reserve", true, "DELETE", "/api/inventory/RES-1/release", 200));
    s.stored.phase = "compensated";
    s.stored.cancelled = outcome == SagaOutcome::kCancelCompensated;
  }
  s.stored.responses["reserve"] = R"({"reservationId":"RES-1"})";
  s.stored.responses["shipping"] = R"({"shipmentId":"INTL-1"})";
  return s;
}

// The violations, each of which must name the sale; "" if none.
std::string Checks(const SagaSale& s) {
  std::vector<std::string> v = AuditSagaSale(s);
  for (const std::string& line : v) {
    EXPECT_TRUE(absl::StartsWith(line, "saga-1: ")) << line;
  }
  return absl::StrJoin(v, "\n");
}

bool Fired(const SagaSale& s, absl::string_view check) {
  return absl::StrContains(Checks(s), absl::StrCat(": ", check, ": "));
}

SagaCall* Find(SagaSale* s, absl::string_view step, bool revert) {
  for (SagaCall& c : s->calls) {
    if (c.step == step && c.revert == revert) return &c;
  }
  return nullptr;
}

TEST(SagaAuditTest, CleanSaleOfEachOutcomePasses) {
  for (const SagaOutcome o :
       {SagaOutcome::kCompleted, SagaOutcome::kFailedCompensated,
        SagaOutcome::kCancelCompensated}) {
    EXPECT_EQ(Checks(Clean(o)), "") << OutcomeName(o);
  }
}

TEST(SagaAuditTest, BillingAgainstTheRiskScoreIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kCompleted);
  Find(&s, "billing", false)->request.path = "/api/billing";  // risk 70
  EXPECT_TRUE(Fired(s, "billing_route"));
}

TEST(SagaAuditTest, ShippingAgainstTheShippingTypeIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kCompleted);
  Find(&s, "shipping", false)->request.body = R"({"shippingType":"domestic"})";
  EXPECT_TRUE(Fired(s, "shipping_route"));
}

TEST(SagaAuditTest, CompletedSaleWithoutBillingIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kCompleted);
  s.calls.pop_back();
  EXPECT_TRUE(Fired(s, "step_missing"));
}

TEST(SagaAuditTest, StepsOutOfOrderAreFlagged) {
  SagaSale s = Clean(SagaOutcome::kCompleted);
  std::swap(s.calls[0], s.calls[1]);  // fraud before reserve
  EXPECT_TRUE(Fired(s, "forward_order"));
}

TEST(SagaAuditTest, ReleaseBeforeShippingCancelIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kFailedCompensated);
  std::swap(s.calls[4].request.seq, s.calls[5].request.seq);
  std::swap(s.calls[4], s.calls[5]);
  EXPECT_TRUE(Fired(s, "revert_order"));
}

TEST(SagaAuditTest, RevertWithAnotherIdThanTheAnswerIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kCancelCompensated);
  Find(&s, "reserve", true)->request.path = "/api/inventory/RES-2/release";
  EXPECT_TRUE(Fired(s, "revert_id"));
}

TEST(SagaAuditTest, CompensationWithoutTheReleaseIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kFailedCompensated);
  s.calls.pop_back();
  EXPECT_TRUE(Fired(s, "revert_missing"));
}

TEST(SagaAuditTest, FraudCheckRevertedIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kFailedCompensated);
  Add(&s, Call("fraud", true, "POST", "/api/fraud/check", 200));
  EXPECT_TRUE(Fired(s, "fraud_reverted"));
}

TEST(SagaAuditTest, ForwardCallAfterCompensationBeganIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kFailedCompensated);
  Add(&s, Call("billing", false, "POST", "/api/high-value-processing", 422));
  EXPECT_TRUE(Fired(s, "call_after_compensation"));
}

TEST(SagaAuditTest, RevertOfACompletedSaleIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kCompleted);
  Add(&s, Call("reserve", true, "DELETE", "/api/inventory/RES-1/release", 200));
  EXPECT_TRUE(Fired(s, "reverted_completed"));
}

TEST(SagaAuditTest, DeclinedSaleBilledIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kFailedCompensated);
  Find(&s, "billing", false)->request.status = 200;
  EXPECT_TRUE(Fired(s, "billing_not_failed"));
}

TEST(SagaAuditTest, DuplicateWithNoEarlierRequestUnderItsIdIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kCompleted);
  Find(&s, "fraud", false)->request.duplicate = true;
  EXPECT_TRUE(Fired(s, "duplicate_without_first"));
}

TEST(SagaAuditTest, ResendAfterADropIsADuplicateNotAViolation) {
  SagaSale s = Clean(SagaOutcome::kCompleted);
  SagaCall dropped = s.calls[1];
  dropped.request.dropped = true;
  dropped.request.status = 0;
  s.calls[1].request.duplicate = true;
  s.calls.insert(s.calls.begin() + 1, dropped);
  for (size_t i = 0; i < s.calls.size(); ++i) s.calls[i].request.seq = i + 1;
  EXPECT_EQ(Checks(s), "");
}

TEST(SagaAuditTest, OneIdAtTwoTargetsIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kCompleted);
  SagaCall again = *Find(&s, "reserve", false);
  again.request.path = "/api/fraud/check";
  s.calls.insert(s.calls.begin() + 1, again);
  EXPECT_TRUE(Fired(s, "one_target"));
}

TEST(SagaAuditTest, UnsignedRequestIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kCompleted);
  s.calls[2].request.signature_valid = false;
  EXPECT_TRUE(Fired(s, "signature"));
}

TEST(SagaAuditTest, StoreShowingAnotherOutcomeIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kCancelCompensated);
  s.stored.cancelled = false;  // compensated, but not for the cancel
  EXPECT_TRUE(Fired(s, "outcome"));
}

TEST(SagaAuditTest, StoreKeepingAnotherAnswerIsFlagged) {
  SagaSale s = Clean(SagaOutcome::kCompleted);
  s.stored.responses["shipping"] = R"({"shipmentId":"INTL-9"})";
  EXPECT_TRUE(Fired(s, "store_response"));
}

TEST(AssignSagaCallsTest, StepIdsGoToTheirSaleAndOthersAreStrays) {
  const std::vector<std::string> events = {"e0", "e1"};
  audit::SinkRequest billing;
  billing.id = workflow::StepRequestId("e1", "billing", false);
  audit::SinkRequest release;
  release.id = workflow::StepRequestId("e0", "reserve", true);
  audit::SinkRequest stray;
  stray.id = "e1";  // the event's own id: no step sends it
  std::vector<SagaSale> sales(2);
  const std::vector<std::string> strays =
      AssignSagaCalls({billing, release, stray}, SagaIds(events), &sales);
  ASSERT_EQ(strays.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(strays[0], "unknown_id: ")) << strays[0];
  ASSERT_EQ(sales[1].calls.size(), 1u);
  EXPECT_EQ(sales[1].calls[0].step, "billing");
  ASSERT_EQ(sales[0].calls.size(), 1u);
  EXPECT_TRUE(sales[0].calls[0].revert);
}

TEST(TallySagaTest, CountsRequestsRevertsAndDuplicatesPerStoredOutcome) {
  SagaSale failed = Clean(SagaOutcome::kFailedCompensated);
  SagaCall resent = failed.calls.back();  // the release, answered again
  resent.request.duplicate = true;
  Add(&failed, resent);
  const std::map<SagaOutcome, SagaRow> rows =
      TallySaga({Clean(SagaOutcome::kCompleted), failed});
  const SagaRow& f = rows.at(SagaOutcome::kFailedCompensated);
  EXPECT_EQ(f.sales, 1);
  EXPECT_EQ(f.requests, 7);
  EXPECT_EQ(f.reverts, 2);  // shipping and reserve, once each
  EXPECT_EQ(f.duplicates, 1);
  EXPECT_EQ(rows.at(SagaOutcome::kCompleted).reverts, 0);
  const std::string table = FormatSagaTable(rows);
  EXPECT_TRUE(absl::StrContains(table, "needs attention")) << table;
  EXPECT_TRUE(absl::StrContains(table, "compensated after cancel")) << table;
}

}  // namespace
}  // namespace outbox::demo
