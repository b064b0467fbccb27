// Copyright (c) edge-outbox authors.
//
// Store::GetStats beyond the queue counters: the commit latency histogram of
// this Store object and the size of the store's files.

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using testing::MakeEvent;

class StoreStatsTest : public testing::StoreTest {};

TEST_F(StoreStatsTest, EveryCommitIsCountedInTheCommitLatency) {
  for (int i = 0; i < 3; ++i) CommitEvent(MakeEvent("sale.created", "", "{}"));
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->commit_latency.count, 3u);
  EXPECT_EQ(stats->commit_latency.counts.size(),
            stats->commit_latency.upper_bounds.size() + 1);
}

TEST_F(StoreStatsTest, CommitLatencyBelongsToTheStoreObject) {
  CommitEvent(MakeEvent("sale.created", "", "{}"));
  Reopen();  // kept in memory only: a new Store object starts at zero
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 1u);
  EXPECT_EQ(stats->commit_latency.count, 0u);
}

TEST_F(StoreStatsTest, DiskBytesGrowWithWhatIsCommitted) {
  absl::StatusOr<Stats> before = store_->GetStats();
  ASSERT_OUTBOX_OK(before);
  EXPECT_GT(before->disk_bytes, 0u);  // manifest, options, log
  CommitEvent(MakeEvent("sale.created", "", std::string(100000, 'p')));
  absl::StatusOr<Stats> after = store_->GetStats();
  ASSERT_OUTBOX_OK(after);
  EXPECT_GE(after->disk_bytes, before->disk_bytes + 100000);
}

}  // namespace
}  // namespace outbox
