// Copyright (c) edge-outbox authors.
//
// Store::Settle writes without an fsync of its own: a power cut before the
// next synced write (Sync, or a Commit with Options::sync) may undo it, and
// then the events are pending again, to be sent again with the same ids;
// after that synced write it survives. Each test cuts the power (the
// fault-injecting file system drops what was not synced) and reopens.

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/store/power_cut_store.h"

namespace outbox {
namespace {

class SettleDurabilityTest : public testing::PowerCutStoreTest {
 protected:
  void SetUp() override { Open(); }

  std::string CommitSaleId(const std::string& sale) {
    auto result = CommitSale(sale);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? result->event_ids.at(0) : "";
  }

  std::vector<std::string> PendingIds() {
    std::vector<std::string> ids;
    auto pending = store_->ListPending(100);
    EXPECT_TRUE(pending.ok()) << pending.status();
    if (pending.ok()) {
      for (const PendingEvent& e : *pending) ids.push_back(e.id);
    }
    return ids;
  }

  uint64_t DeliveredTotal() {
    auto stats = store_->GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->delivered_total : ~uint64_t{0};
  }
};

TEST_F(SettleDurabilityTest, CutBeforeAnySyncMeansTheEventsArePendingAgain) {
  const std::string a = CommitSaleId("sale-1");
  const std::string b = CommitSaleId("sale-2");
  SettleAllDelivered();
  EXPECT_TRUE(PendingIds().empty());
  CutPowerAndReopen();
  // Allowed: resent with the same ids. Never half of the settlement.
  EXPECT_EQ(PendingIds(), (std::vector<std::string>{a, b}));
  EXPECT_EQ(DeliveredTotal(), 0u);
}

TEST_F(SettleDurabilityTest, SyncMakesTheSettlementDurable) {
  CommitSaleId("sale-1");
  CommitSaleId("sale-2");
  SettleAllDelivered();
  ASSERT_OUTBOX_OK(store_->Sync());
  CutPowerAndReopen();
  EXPECT_TRUE(PendingIds().empty());
  EXPECT_EQ(DeliveredTotal(), 2u);
}

TEST_F(SettleDurabilityTest, ALaterSyncedCommitMakesTheSettlementDurable) {
  CommitSaleId("sale-1");
  SettleAllDelivered();
  const std::string later = CommitSaleId("sale-2");
  CutPowerAndReopen();
  EXPECT_EQ(PendingIds(), std::vector<std::string>{later});
  EXPECT_EQ(DeliveredTotal(), 1u);
}

TEST_F(SettleDurabilityTest, SingleEventFormsAreSynced) {
  CommitSaleId("sale-1");
  auto due = store_->NextDue(1);
  ASSERT_OUTBOX_OK(due);
  ASSERT_OUTBOX_OK(store_->MarkDelivered(due->events.at(0)));
  CutPowerAndReopen();
  EXPECT_TRUE(PendingIds().empty());
  EXPECT_EQ(DeliveredTotal(), 1u);
}

}  // namespace
}  // namespace outbox
