// Copyright (c) edge-outbox authors.

#include "examples/pos_sim/pos_sim_sale.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "outbox/txn.h"

namespace outbox::pos_sim {
namespace {

constexpr absl::string_view kEventIdField = R"("event_id":")";

std::string SaleRecord(int64_t n, absl::string_view event_id,
                       absl::string_view status) {
  return absl::StrCat(R"({"n":)", n, R"(,"event_id":")", event_id,
                      R"(","status":")", status, R"("})");
}

// The event id a SaleRecord holds; "" if it holds none.
std::string EventIdOf(absl::string_view record) {
  const size_t at = record.find(kEventIdField);
  if (at == absl::string_view::npos) return "";
  record.remove_prefix(at + kEventIdField.size());
  return std::string(record.substr(0, record.find('"')));
}

// Seed 003's order, one object per service.
std::string Reserve(const std::string& sale, int64_t n) {
  return absl::StrCat(R"({"sale":")", sale, R"(","n":)", n,
                      R"(,"items":[{"sku":"SKU-)", n % 40, R"(","qty":1}]})");
}

std::string Fraud(const std::string& sale, int64_t n) {
  return absl::StrCat(R"({"sale":")", sale, R"(","n":)", n, R"(,"riskScore":)",
                      RiskScore(n), "}");
}

std::string Shipping(const std::string& sale, int64_t n) {
  return absl::StrCat(R"({"sale":")", sale, R"(","n":)", n,
                      R"(,"shippingType":")", ShippingType(n), R"("})");
}

std::string Billing(const SaleMix& mix, const std::string& sale, int64_t n) {
  return absl::StrCat(
      R"({"sale":")", sale, R"(","n":)", n, R"(,"total_cents":)", 100 + n % 900,
      IsDeclined(mix, n) ? R"(,"simulate":"decline")" : "", "}");
}

}  // namespace

int RiskScore(int64_t n) { return static_cast<int>((n * 37 + 11) % 100); }

std::string ShippingType(int64_t n) {
  return n % 3 == 2 ? "international" : "domestic";
}

bool IsDeclined(const SaleMix& mix, int64_t n) {
  return mix.decline_every > 0 &&
         n % mix.decline_every == mix.decline_every - 1;
}

bool IsRefunded(const SaleMix& mix, int64_t n) {
  // A declined card was never charged: there is nothing to refund.
  return mix.refund_every > 0 && n % mix.refund_every == mix.refund_every - 1 &&
         !IsDeclined(mix, n);
}

std::string SalePayload(const SaleMix& mix, const std::string& sale,
                        int64_t n) {
  switch (mix.saga) {
    case SaleMix::Saga::kNone:
      return absl::StrCat(R"({"sale":")", sale, R"(","n":)", n,
                          R"(,"total_cents":)", 100 + n % 900, "}");
    case SaleMix::Saga::kWhole:
      return absl::StrCat(
          R"({"sale":")", sale, R"(","n":)", n, R"(,"total_cents":)",
          100 + n % 900, R"(,"riskScore":)", RiskScore(n),
          R"(,"shippingType":")", ShippingType(n), R"(")",
          IsDeclined(mix, n) ? R"(,"simulate":"decline")" : "", "}");
    case SaleMix::Saga::kPerStep:
      break;
  }
  return absl::StrCat(R"({"reserve":)", Reserve(sale, n), R"(,"fraud":)",
                      Fraud(sale, n), R"(,"shipping":)", Shipping(sale, n),
                      R"(,"billing":)", Billing(mix, sale, n), "}");
}

absl::StatusOr<CommitResult> CommitSale(Store* store, const SaleMix& mix,
                                        const std::string& till, int64_t n) {
  const std::string sale = absl::StrCat(till, "-", n);
  Txn txn;
  Event event;
  event.type = "sale.created";
  if (mix.keyed_by_till) event.ordering_key = till;
  event.payload = SalePayload(mix, sale, n);
  const std::string event_id = txn.Emit(event);
  txn.Put(kTable, sale, SaleRecord(n, event_id, "sold"));
  txn.Put(kTable, kNextSaleKey, absl::StrCat(n + 1));
  txn.SetIdempotencyKey(sale);
  return store->Commit(txn);
}

absl::StatusOr<std::string> CommitRefund(Store* store, const std::string& till,
                                         int64_t n) {
  const std::string sale = absl::StrCat(till, "-", n);
  absl::StatusOr<std::string> record = store->Get(kTable, sale);
  if (!record.ok()) return record.status();
  const std::string event_id = EventIdOf(*record);
  if (event_id.empty()) {
    return absl::DataLossError(
        absl::StrCat("the record of sale ", sale, " names no event id"));
  }
  // The refund and the cancel in one batch: the till's books and the
  // workflow's compensation can never disagree.
  Txn txn;
  txn.Put(kTable, sale, SaleRecord(n, event_id, "refunded"));
  txn.Cancel(event_id, "refunded at the till");
  txn.SetIdempotencyKey(absl::StrCat("refund-", sale));
  absl::StatusOr<CommitResult> result = store->Commit(txn);
  if (!result.ok()) return result.status();
  return event_id;
}

}  // namespace outbox::pos_sim
