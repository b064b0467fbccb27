// Copyright (c) edge-outbox authors.
//
// The end of the saga chapter: the till's store, read after it exited, and
// the receiver's log, through the checks of saga_audit.h.

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "examples/pos_sim/pos_sim_sale.h"
#include "outbox/store.h"
#include "tools/ctl/workflow_view.h"
#include "tools/demo/saga.h"

namespace outbox::demo {
namespace {

constexpr size_t kChapterViolationsShown = 10;

}  // namespace

absl::Status SagaChapter::Audit() {
  Event(
      "saga: auditing every workflow against the receiver's log and the "
      "till's store");
  pos_sim::SaleMix mix;
  mix.decline_every = options_.saga.decline_every;
  mix.refund_every = options_.saga.refund_every;
  std::vector<SagaSale> sales;
  std::vector<std::string> event_ids;
  for (const audit::AcknowledgedSale& a : till_->acknowledged()) {
    SagaSale& sale = sales.emplace_back();
    sale.sale = absl::StrCat(till_->spec().name, "-", a.n);
    sale.event_id = a.event_id;
    sale.expected =
        pos_sim::IsDeclined(mix, a.n)   ? SagaOutcome::kFailedCompensated
        : pos_sim::IsRefunded(mix, a.n) ? SagaOutcome::kCancelCompensated
                                        : SagaOutcome::kCompleted;
    event_ids.push_back(a.event_id);
  }
  std::vector<std::string> violations =
      AssignSagaCalls(log_->requests(), SagaIds(event_ids), &sales);
  OUTBOX_RETURN_IF_ERROR(ReadStore(&sales));
  for (const SagaSale& sale : sales) {
    for (std::string& v : AuditSagaSale(sale))
      violations.push_back(std::move(v));
  }
  display_->Print("");
  display_->Print(FormatSagaTable(TallySaga(sales)));
  for (size_t v = 0; v < violations.size() && v < kChapterViolationsShown;
       ++v) {
    Event(violations[v]);
  }
  if (!violations.empty()) {
    return absl::DataLossError(absl::StrCat(
        violations.size(), " saga audit violations, the first: ", violations[0],
        "; stores and logs kept in ", dir_));
  }
  return absl::OkStatus();
}

absl::Status SagaChapter::ReadStore(std::vector<SagaSale>* sales) {
  Options options;
  options.tables = {pos_sim::kTable};
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          Store::OpenReadOnly(options, till_->spec().db));
  for (SagaSale& sale : *sales) {
    OUTBOX_ASSIGN_OR_RETURN(std::optional<ctl::WorkflowView> view,
                            ctl::LoadWorkflow(store.get(), sale.event_id, 0));
    if (!view.has_value()) {
      sale.stored.phase = "not stored";
      continue;
    }
    sale.stored.phase = ctl::PhaseName(*view);
    sale.stored.cancelled = view->state.cancelled();
    for (const storage::WorkflowStepState& step : view->state.steps()) {
      sale.stored.responses[step.name()] = step.response();
    }
  }
  return absl::OkStatus();
}

absl::Status SagaChapter::CheckStory() const {
  const int64_t refunded = static_cast<int64_t>(till_->refunded().size());
  if (refunded != refunds_ || declines_ == 0 || refunds_ == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the saga did not happen as told: ", refunded, " of ", refunds_,
        " refunds committed, ", declines_, " declines planned"));
  }
  return absl::OkStatus();
}

}  // namespace outbox::demo
