// Copyright (c) edge-outbox authors.
//
// replay --all against a real store whose Replay fails for chosen events:
// failures are counted and reported, the rest still replayed, and a full
// queue stops the run.

#include "tools/ctl/replay_all.h"

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/events.h"
#include "tests/testing/forwarding_store.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;

// A Store that forwards to a real one, except that Replay of the ids in
// `fail_` returns `failure_` without touching the store.
class FailingReplayStore final : public testing::ForwardingStore {
 public:
  FailingReplayStore(Store* base, absl::flat_hash_set<std::string> fail,
                     absl::Status failure)
      : ForwardingStore(base),
        fail_(std::move(fail)),
        failure_(std::move(failure)) {}

  absl::Status Replay(absl::string_view id) override {
    if (fail_.contains(id)) return failure_;
    return base_->Replay(id);
  }

 private:
  const absl::flat_hash_set<std::string> fail_;
  const absl::Status failure_;
};

class CtlReplayAllTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Options options;
    options.sync = false;  // hundreds of commits; durability is not tested
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open(options, dir_.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    store_ = *std::move(store);
  }

  // Makes `n` dead letters; returns their ids in id order.
  std::vector<std::string> MakeDeadLetters(int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      Txn txn;
      ids.push_back(txn.Emit(testing::MakeEvent("t")));
      EXPECT_OUTBOX_OK(store_->Commit(txn));
      absl::StatusOr<PendingEvent> e = store_->FindPending(ids.back());
      EXPECT_OUTBOX_OK(e);
      if (e.ok()) {
        EXPECT_OUTBOX_OK(store_->MoveToDeadLetters(*e, "test"));
      }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  // Runs ReplayAll over `fail` failing with `failure`; returns what it
  // printed, its status in *status.
  std::string Run(absl::flat_hash_set<std::string> fail, absl::Status failure,
                  absl::Status* status) {
    FailingReplayStore store(store_.get(), std::move(fail), failure);
    char* buffer = nullptr;
    size_t size = 0;
    FILE* out = open_memstream(&buffer, &size);
    *status = ReplayAll(&store, out);
    fclose(out);
    std::string text(buffer, size);
    free(buffer);
    return text;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(CtlReplayAllTest, CountsFailuresAndReplaysTheRestAcrossBatches) {
  // More than one listing batch (256), with failures spread through it.
  std::vector<std::string> ids = MakeDeadLetters(600);
  absl::flat_hash_set<std::string> fail;
  for (size_t i = 0; i < ids.size(); i += 100) fail.insert(ids[i]);
  absl::Status status;
  const std::string out =
      Run(fail, absl::UnavailableError("disk hiccup"), &status);
  EXPECT_STATUS_CODE(status, absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("replayed 594, failed 6"));
  EXPECT_THAT(status.message(), HasSubstr("first failure: disk hiccup"));
  EXPECT_THAT(out,
              HasSubstr(absl::StrCat("failed ", ids[0], " (UNAVAILABLE)")));
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 594u);
  EXPECT_EQ(stats->dead_letters, 6u);
}

TEST_F(CtlReplayAllTest, StopsAtAFullQueue) {
  std::vector<std::string> ids = MakeDeadLetters(3);
  absl::Status status;
  Run({ids[1]}, absl::ResourceExhaustedError("queue full"), &status);
  EXPECT_STATUS_CODE(status, absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(),
              HasSubstr("replayed 1, failed 1 (stopped: the pending queue is "
                        "full; the rest stay dead letters)"));
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 1u);
  EXPECT_EQ(stats->dead_letters, 2u);
}

}  // namespace
}  // namespace outbox::ctl
