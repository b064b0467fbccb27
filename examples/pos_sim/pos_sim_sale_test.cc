// Copyright (c) edge-outbox authors.

#include "examples/pos_sim/pos_sim_sale.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::pos_sim {
namespace {

using nlohmann::json;

SaleMix Saga(SaleMix::Saga saga, int64_t decline, int64_t refund) {
  SaleMix mix;
  mix.saga = saga;
  mix.decline_every = decline;
  mix.refund_every = refund;
  return mix;
}

absl::StatusOr<std::unique_ptr<Store>> OpenSales(const testing::TempDir& dir) {
  Options options;
  options.tables = {kTable};
  return Store::Open(options, dir.path() + "/db");
}

TEST(SalePayloadTest, PerStepHasOneMemberPerSeed003Step) {
  const json p = json::parse(
      SalePayload(Saga(SaleMix::Saga::kPerStep, 0, 0), "till-1-4", 4));
  EXPECT_EQ(p["reserve"]["sale"], "till-1-4");
  EXPECT_EQ(p["fraud"]["riskScore"], RiskScore(4));
  EXPECT_EQ(p["shipping"]["shippingType"], ShippingType(4));
  EXPECT_EQ(p["billing"]["n"], 4);
  EXPECT_FALSE(p["billing"].contains("simulate"));
}

TEST(SalePayloadTest, WholeOrderCarriesEveryStepsValues) {
  const json p =
      json::parse(SalePayload(Saga(SaleMix::Saga::kWhole, 3, 0), "t-2", 2));
  EXPECT_EQ(p["sale"], "t-2");
  EXPECT_EQ(p["riskScore"], RiskScore(2));
  EXPECT_EQ(p["shippingType"], "international");
  EXPECT_EQ(p["simulate"], "decline");  // 2 mod 3 = 3 - 1
}

TEST(SalePayloadTest, DeclinedSaleAsksBillingToDecline) {
  const SaleMix mix = Saga(SaleMix::Saga::kPerStep, 5, 0);
  EXPECT_EQ(json::parse(SalePayload(mix, "t-4", 4))["billing"]["simulate"],
            "decline");
  EXPECT_FALSE(
      json::parse(SalePayload(mix, "t-5", 5))["billing"].contains("simulate"));
}

TEST(SalePayloadTest, TwentySalesMixBothBillingRoutesAndShippingTypes) {
  std::set<bool> high_risk;
  std::set<std::string> shipping;
  for (int64_t n = 0; n < 20; ++n) {
    EXPECT_GE(RiskScore(n), 0);
    EXPECT_LT(RiskScore(n), 100);
    high_risk.insert(RiskScore(n) >= 50);
    shipping.insert(ShippingType(n));
  }
  EXPECT_EQ(high_risk.size(), 2u);
  EXPECT_EQ(shipping.size(), 2u);
}

TEST(SaleMixTest, DeclinedSaleIsNeverRefunded) {
  const SaleMix mix = Saga(SaleMix::Saga::kWhole, 4, 2);
  EXPECT_TRUE(IsDeclined(mix, 3));
  EXPECT_FALSE(IsRefunded(mix, 3));  // 3 mod 2 = 1, but declined
  EXPECT_TRUE(IsRefunded(mix, 1));
  EXPECT_FALSE(IsRefunded(mix, 2));
}

TEST(CommitRefundTest, CancelsTheSalesWorkflowAndMarksItRefunded) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<Store>> store = OpenSales(dir);
  ASSERT_OUTBOX_OK(store);
  const SaleMix mix = Saga(SaleMix::Saga::kPerStep, 0, 1);
  absl::StatusOr<CommitResult> sale = CommitSale(store->get(), mix, "t", 0);
  ASSERT_OUTBOX_OK(sale);
  absl::StatusOr<std::string> cancelled = CommitRefund(store->get(), "t", 0);
  ASSERT_OUTBOX_OK(cancelled);
  EXPECT_EQ(*cancelled, sale->event_ids.at(0));
  absl::StatusOr<WorkflowRecord> workflow =
      (*store)->GetWorkflow(sale->event_ids.at(0));
  ASSERT_OUTBOX_OK(workflow);
  EXPECT_TRUE(workflow->cancelled);
  absl::StatusOr<std::string> record = (*store)->Get(kTable, "t-0");
  ASSERT_OUTBOX_OK(record);
  EXPECT_EQ(json::parse(*record)["status"], "refunded");
}

TEST(CommitRefundTest, UnknownSaleIsNotFound) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<Store>> store = OpenSales(dir);
  ASSERT_OUTBOX_OK(store);
  EXPECT_STATUS_CODE(CommitRefund(store->get(), "t", 9),
                     absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace outbox::pos_sim
