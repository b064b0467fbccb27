// Copyright (c) edge-outbox authors.
//
// The C API end to end: the C program examples/c/c_api_example.c, linked
// statically against the project's libraries, commits and drains through
// outbox/outbox.h into a real outbox-sink. The workflow cancel is called
// here directly and checked through the C++ API after a reopen.

#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "outbox/outbox.h"
#include "outbox/store.h"
#include "proto/storage.pb.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/store_fixture.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

class CApiTest : public testing::AgentSinkTest {};

TEST_F(CApiTest, CProgramCommitsAndDrainsThroughTheCApi) {
  StartSink();
  const std::string config = dir_.Sub("agent.textproto");
  std::ofstream(config) << Config();
  store_.reset();  // the C program opens the store itself
  auto run = sink::RunToExit(OUTBOX_C_API_EXAMPLE, dir_.path(),
                             {dir_.Sub("db"), config}, absl::Seconds(60));
  ASSERT_OUTBOX_OK(run);
  EXPECT_EQ(run->exit_code, 0) << run->out << run->err;
  EXPECT_NE(run->out.find("(duplicate)"), std::string::npos) << run->out;
  std::set<std::string> delivered;
  for (const testing::SinkLine& l : SinkLog()) {
    if (l.status == 200) delivered.insert(l.id);
  }
  EXPECT_EQ(delivered.size(), 2u) << run->out;
}

// A store opened through the C API with the table "sales", and one event
// committed in it.
class CApiCancelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tables[] = {"sales"};
    char* err = nullptr;
    store_ = outbox_open(dir_.Sub("db").c_str(), tables, 1, &err);
    ASSERT_NE(store_, nullptr) << err;
    outbox_txn* txn = outbox_txn_begin();
    outbox_txn_put(txn, "sales", "sale-1", 6, "open", 4);
    outbox_txn_emit(txn, "order.created", "till-1", "{}", 2, nullptr, id_);
    const int code = outbox_commit(store_, txn, nullptr, &err);
    outbox_txn_destroy(txn);
    ASSERT_EQ(code, 0) << err;
  }
  void TearDown() override {
    char* err = nullptr;
    EXPECT_EQ(outbox_close(store_, &err), 0) << err;
  }

  // Commits the sale's status "cancelled" with a cancel of `event_id`;
  // returns outbox_commit's code and its message in `*message`.
  int CommitCancel(const char* event_id, const char* reason,
                   std::string* message = nullptr) {
    outbox_txn* txn = outbox_txn_begin();
    outbox_txn_put(txn, "sales", "sale-1", 6, "cancelled", 9);
    outbox_txn_cancel(txn, event_id, reason);
    char* err = nullptr;
    const int code = outbox_commit(store_, txn, nullptr, &err);
    outbox_txn_destroy(txn);
    if (message != nullptr && err != nullptr) *message = err;
    outbox_free(err);
    return code;
  }

  // Closes the C handle and opens the store with the C++ API.
  std::unique_ptr<Store> ReopenInCpp() {
    char* err = nullptr;
    EXPECT_EQ(outbox_close(store_, &err), 0) << err;
    store_ = nullptr;
    Options options;
    options.tables = {"sales"};
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open(options, dir_.Sub("db"));
    EXPECT_OUTBOX_OK(store);
    return store.ok() ? *std::move(store) : nullptr;
  }

  testing::TempDir dir_;
  outbox_store* store_ = nullptr;
  char id_[OUTBOX_EVENT_ID_LEN + 1];
};

TEST_F(CApiCancelTest, CancelIsCommittedWithTheBusinessChange) {
  ASSERT_EQ(CommitCancel(id_, "customer changed their mind"), 0);
  std::unique_ptr<Store> store = ReopenInCpp();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<WorkflowRecord> workflow = store->GetWorkflow(id_);
  ASSERT_OUTBOX_OK(workflow);
  EXPECT_TRUE(workflow->cancelled);
  EXPECT_EQ(workflow->cancel_reason, "customer changed their mind");
  absl::StatusOr<std::string> sale = store->Get("sales", "sale-1");
  ASSERT_OUTBOX_OK(sale);
  EXPECT_EQ(*sale, "cancelled");
  EXPECT_OUTBOX_OK(store->Close());
}

TEST_F(CApiCancelTest, CancellingTwiceKeepsTheFirstCancel) {
  ASSERT_EQ(CommitCancel(id_, "first"), 0);
  ASSERT_EQ(CommitCancel(id_, nullptr), 0);
  std::unique_ptr<Store> store = ReopenInCpp();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<WorkflowRecord> workflow = store->GetWorkflow(id_);
  ASSERT_OUTBOX_OK(workflow);
  EXPECT_EQ(workflow->cancel_reason, "first");
  EXPECT_OUTBOX_OK(store->Close());
}

TEST_F(CApiCancelTest, CancelByIdempotencyKeyNeedsOnlyTheBusinessKey) {
  char id[OUTBOX_EVENT_ID_LEN + 1];
  outbox_txn* sale = outbox_txn_begin();
  outbox_txn_emit(sale, "order.created", "till-1", "{}", 2, nullptr, id);
  outbox_txn_set_idempotency_key(sale, "sale-2");
  char* err = nullptr;
  ASSERT_EQ(outbox_commit(store_, sale, nullptr, &err), 0) << err;
  outbox_txn_destroy(sale);
  outbox_txn* cancel = outbox_txn_begin();
  outbox_txn_cancel_by_idempotency_key(cancel, "sale-2", "changed mind");
  ASSERT_EQ(outbox_commit(store_, cancel, nullptr, &err), 0) << err;
  outbox_txn_cancel_by_idempotency_key(cancel, "sale-404", nullptr);
  EXPECT_EQ(outbox_commit(store_, cancel, nullptr, &err),
            static_cast<int>(absl::StatusCode::kNotFound));
  outbox_free(err);
  outbox_txn_destroy(cancel);
  std::unique_ptr<Store> store = ReopenInCpp();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<WorkflowRecord> workflow = store->GetWorkflow(id);
  ASSERT_OUTBOX_OK(workflow);
  EXPECT_EQ(workflow->cancel_reason, "changed mind");
  EXPECT_OUTBOX_OK(store->Close());
}

TEST_F(CApiCancelTest, CancelWithoutAnIdFailsTheWholeCommit) {
  std::string message;
  EXPECT_EQ(CommitCancel(nullptr, "r", &message),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_STREQ(
      outbox_code_name(static_cast<int>(absl::StatusCode::kInvalidArgument)),
      "INVALID_ARGUMENT");
  EXPECT_FALSE(message.empty());
  std::unique_ptr<Store> store = ReopenInCpp();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::string> sale = store->Get("sales", "sale-1");
  ASSERT_OUTBOX_OK(sale);
  EXPECT_EQ(*sale, "open");  // the business change was not written either
  EXPECT_OUTBOX_OK(store->Close());
}

// Every figure of Store::GetStats reaches the C struct: a dead letter
// purged, a workflow needing attention (settled as the agent would), one
// event pending, and the directory's size.
class CApiStatsTest : public testing::StoreTest {};

TEST_F(CApiStatsTest, StatsCarryEveryFigureOfGetStats) {
  const std::string rejected = CommitEvent(testing::MakeEvent("order.created"));
  ASSERT_OUTBOX_OK(
      store_->MoveToDeadLetters(DueWithId(rejected), "rejected (HTTP 400)"));
  clock_.Advance(absl::Milliseconds(1));
  absl::StatusOr<size_t> purged =
      store_->PurgeDeadLetters(absl::ZeroDuration());
  ASSERT_OUTBOX_OK(purged);
  ASSERT_EQ(*purged, 1u);
  Settlement attention;
  attention.kind = Settlement::Kind::kDeadLetterUnsent;
  attention.event = DueWithId(CommitEvent(testing::MakeEvent("order.created")));
  attention.reason = "revert failed for good";
  storage::WorkflowState state;
  state.set_phase(storage::WORKFLOW_PHASE_NEEDS_ATTENTION);
  attention.workflow_state = state.SerializeAsString();
  ASSERT_OUTBOX_OK(store_->Settle({attention}));
  CommitEvent(testing::MakeEvent("order.created"));
  absl::StatusOr<Stats> cpp = store_->GetStats();
  ASSERT_OUTBOX_OK(cpp);
  ASSERT_OUTBOX_OK(store_->Close());
  store_.reset();

  const char* tables[] = {"sales"};
  char* err = nullptr;
  outbox_store* c = outbox_open(path().c_str(), tables, 1, &err);
  ASSERT_NE(c, nullptr) << err;
  outbox_stats stats;
  ASSERT_EQ(outbox_get_stats(c, &stats, &err), 0) << err;
  EXPECT_EQ(stats.pending_events, 1u);
  EXPECT_EQ(stats.pending_bytes, cpp->pending_bytes);
  EXPECT_EQ(stats.dead_letters, 1u);  // the workflow's
  EXPECT_EQ(stats.delivered_total, 0u);
  EXPECT_EQ(stats.dead_letters_purged, 1u);
  EXPECT_EQ(stats.workflows_needing_attention, 1u);
  EXPECT_GT(stats.disk_bytes, 0u);
  EXPECT_EQ(outbox_close(c, &err), 0) << err;
}

}  // namespace
}  // namespace outbox
