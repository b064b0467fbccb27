// Copyright (c) edge-outbox authors.

#include "tools/ctl/drain_eta.h"

#include <cmath>

#include "gtest/gtest.h"

namespace outbox::ctl {
namespace {

constexpr char kMetrics[] =
    "# TYPE outbox_destination_pending_events gauge\n"
    "outbox_destination_pending_events{destination=\"erp\"} 79123\n"
    "outbox_destination_pending_events{destination=\"q\\\"x\"} 12\n"
    "# TYPE outbox_destination_delivery_rate gauge\n"
    "outbox_destination_delivery_rate{destination=\"erp\"} 412.5\n"
    "outbox_destination_delivery_rate{destination=\"q\\\"x\"} 0\n"
    "# TYPE outbox_drain_eta_seconds gauge\n"
    "outbox_drain_eta_seconds{destination=\"erp\"} 191.8\n"
    "outbox_drain_eta_seconds{destination=\"q\\\"x\"} +Inf\n";

TEST(DrainEtaTest, ReadsEachDestinationFromTheAgentsMetrics) {
  absl::StatusOr<std::vector<DrainEta>> etas = ParseDrainEta(kMetrics, "f");
  ASSERT_TRUE(etas.ok()) << etas.status();
  ASSERT_EQ(etas->size(), 2u);
  EXPECT_EQ((*etas)[0].destination, "erp");
  EXPECT_EQ((*etas)[0].pending_events, 79123);
  EXPECT_EQ((*etas)[0].events_per_second, 412.5);
  EXPECT_EQ(FormatDrainEta((*etas)[0]),
            "3m11s at 412.5 events/s, 79123 pending");
  EXPECT_EQ((*etas)[1].destination, "q\"x");
  EXPECT_TRUE(std::isinf((*etas)[1].eta_seconds));
  EXPECT_EQ(FormatDrainEta((*etas)[1]),
            "stalled: 12 pending, none delivered in the last minute");
}

TEST(DrainEtaTest, AFileWithoutTheMetricIsNotFound) {
  EXPECT_EQ(ParseDrainEta("outbox_pending_events 3\n", "f").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace outbox::ctl
