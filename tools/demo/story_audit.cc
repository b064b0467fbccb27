// Copyright (c) edge-outbox authors.
//
// The end of the story: every till's store, read after it exited, audited
// against what the receiver logged (tools/audit/), and the checks that the
// story showed what it tells.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "outbox/store.h"
#include "tools/demo/story.h"

namespace outbox::demo {
namespace {

constexpr size_t kStoryViolationsShown = 10;

}  // namespace

absl::Status Story::Audit() {
  Event("auditing every committed sale against the receiver's log");
  absl::Time first = absl::InfiniteFuture(), last = absl::InfinitePast();
  for (size_t i = 0; i < tills_.size(); ++i) {
    TillResult result;
    OUTBOX_RETURN_IF_ERROR(AuditTill(i, &result));
    results_.push_back(result);
    first = std::min(first, log_->tally(i).first_delivery);
    last = std::max(last, log_->tally(i).last_delivery);
  }
  display_->Print("");
  display_->Print(FormatResults(results_, last - first));
  int64_t lost = 0, violated = 0;
  for (const TillResult& r : results_) {
    lost += r.lost;
    violated += r.violations;
  }
  if (lost > 0 || violated > 0) {
    return absl::DataLossError(absl::StrCat(
        lost, " committed sales never reached the receiver; ", violated,
        " audit violations in all; stores and logs kept in ", dir_));
  }
  return absl::OkStatus();
}

absl::Status Story::AuditTill(size_t i, TillResult* result) {
  const Till& till = *tills_[i];
  const TillTally& tally = log_->tally(i);
  Options options;
  options.tables = {"sales"};
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          Store::OpenReadOnly(options, till.spec().db));
  audit::AuditInput input;
  input.till = till.spec().name;
  input.sales = till.spec().sales;
  input.acknowledged = till.acknowledged();
  input.requests = tally.requests;
  input.require_signatures = receiver_->Signed();
  const audit::AuditReport report = audit::AuditDeliveries(input, store.get());
  OUTBOX_ASSIGN_OR_RETURN(const Stats stats, store->GetStats());
  result->till = input.till;
  result->committed = report.committed;
  result->delivered = static_cast<int64_t>(tally.delivered.size());
  result->duplicates = report.duplicates;
  result->lost = LostSales(report);
  result->dead_letters = static_cast<int64_t>(stats.dead_letters);
  result->violations = report.violation_count;
  result->offline = tally.first_request - first_started_[i];
  result->drain_rate =
      DrainRate(result->delivered, tally.first_delivery, tally.last_delivery);
  for (size_t v = 0; v < report.violations.size() && v < kStoryViolationsShown;
       ++v) {
    Event(absl::StrCat(input.till, ": ", report.violations[v]));
  }
  return absl::OkStatus();
}

absl::Status Story::CheckStory() const {
  int64_t answered_503 = 0, answered_429 = 0;
  for (size_t i = 0; i < tills_.size(); ++i) {
    answered_503 += log_->tally(i).answered_503;
    answered_429 += log_->tally(i).answered_429;
  }
  std::vector<std::string> missing;
  if (receiver_->InjectsAnswers() && answered_503 == 0) {
    missing.push_back("no request was answered 503");
  }
  if (receiver_->InjectsAnswers() && answered_429 == 0) {
    missing.push_back("no request was answered 429");
  }
  if (tills_[victim_]->runs() != 2) {
    missing.push_back("the killed till was not restarted");
  }
  if (log_->strays() != 0) {
    missing.push_back(
        absl::StrCat(log_->strays(), " requests carried no till's sale"));
  }
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the story did not happen as told: ", absl::StrJoin(missing, "; "),
        " (try another --seed or more --sales)"));
  }
  return absl::OkStatus();
}

}  // namespace outbox::demo
