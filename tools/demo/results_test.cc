// Copyright (c) edge-outbox authors.

#include "tools/demo/results.h"

#include "gtest/gtest.h"

namespace outbox::demo {
namespace {

TEST(LostSalesTest, CountsCommittedSalesNeverAnswered2xxOnly) {
  audit::AuditReport report;
  EXPECT_EQ(LostSales(report), 0);
  report.fired["acknowledged_not_delivered"] = 2;
  report.fired["committed_not_delivered"] = 1;
  report.fired["order_broken"] = 5;  // a violation, but nothing lost
  EXPECT_EQ(LostSales(report), 3);
}

TEST(DrainRateTest, SalesPerSecondOfTheDrain) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_DOUBLE_EQ(DrainRate(101, t0, t0 + absl::Seconds(2)), 50.5);
  EXPECT_EQ(DrainRate(1, t0, t0), 0);
  EXPECT_EQ(DrainRate(5, t0, t0), 0);
}

TEST(FormatResultsTest, OneRowPerTillAndATotal) {
  TillResult a{"till-1", 40, 40, 2, 0, 0, 0, absl::Milliseconds(1500), 20};
  TillResult b{"till-2", 40, 39, 1, 1, 0, 1, absl::Milliseconds(2500), 10};
  const std::string table = FormatResults({a, b}, absl::Seconds(4));
  EXPECT_EQ(table,
            "till     committed  delivered  duplicates  LOST  dead letters "
            "  offline  drain rate\n"
            "till-1          40         40           2     0             0 "
            "    1.5 s        20/s\n"
            "till-2          40         39           1     1             0 "
            "    2.5 s        10/s\n"
            "total           80         79           3     1             0 "
            "    2.5 s        20/s\n");
}

}  // namespace
}  // namespace outbox::demo
