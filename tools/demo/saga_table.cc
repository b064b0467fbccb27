// Copyright (c) edge-outbox authors.
//
// The saga chapter's bookkeeping: requests to sales, sales to outcomes, and
// the table the demo prints (saga_audit.h).

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/demo/saga_audit.h"

namespace outbox::demo {

std::vector<std::string> AssignSagaCalls(
    const std::vector<audit::SinkRequest>& requests, const SagaIds& ids,
    std::vector<SagaSale>* sales) {
  std::vector<std::string> strays;
  for (const audit::SinkRequest& r : requests) {
    const SagaIds::Owner* owner = ids.Find(r.id);
    if (owner == nullptr || owner->sale >= sales->size()) {
      strays.push_back(absl::StrCat(
          "unknown_id: request seq ", r.seq, " (", r.method, " ", r.path,
          ") carries ", "webhook-id \"", r.id, "\", no step of any sale"));
      continue;
    }
    (*sales)[owner->sale].calls.push_back({owner->step, owner->revert, r});
  }
  return strays;
}

std::map<SagaOutcome, SagaRow> TallySaga(const std::vector<SagaSale>& sales) {
  std::map<SagaOutcome, SagaRow> rows;
  for (const SagaSale& sale : sales) {
    SagaRow& row = rows[StoredOutcome(sale.stored)];
    ++row.sales;
    std::set<std::string> reverted;
    for (const SagaCall& call : sale.calls) {
      ++row.requests;
      if (call.request.duplicate) ++row.duplicates;
      if (call.revert && call.request.ok()) reverted.insert(call.step);
    }
    row.reverts += static_cast<int64_t>(reverted.size());
  }
  return rows;
}

std::string FormatSagaTable(const std::map<SagaOutcome, SagaRow>& rows) {
  std::string out =
      absl::StrFormat("%-34s %6s %9s %8s %11s\n", "saga outcome", "sales",
                      "requests", "reverts", "duplicates");
  SagaRow total;
  for (const SagaOutcome o :
       {SagaOutcome::kCompleted, SagaOutcome::kFailedCompensated,
        SagaOutcome::kCancelCompensated, SagaOutcome::kNeedsAttention}) {
    const auto it = rows.find(o);
    const SagaRow row = it == rows.end() ? SagaRow() : it->second;
    absl::StrAppendFormat(&out, "%-34s %6d %9d %8d %11d\n", OutcomeName(o),
                          row.sales, row.requests, row.reverts, row.duplicates);
    total.sales += row.sales;
    total.requests += row.requests;
    total.reverts += row.reverts;
    total.duplicates += row.duplicates;
  }
  absl::StrAppendFormat(&out, "%-34s %6d %9d %8d %11d", "total", total.sales,
                        total.requests, total.reverts, total.duplicates);
  return out;
}

}  // namespace outbox::demo
