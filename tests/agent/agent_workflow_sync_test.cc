// Copyright (c) edge-outbox authors.
//
// A workflow's next request waits for the write before it to be durable,
// and nothing else waits with it (issue 26): the agent asks the store for a
// background sync (Store::RequestSync) and goes on sending other events
// until the store's durable mark covers the write. Here the store's
// durability is held back by hand while the real outbox-sink receives.

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/workflow/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "proto/storage.pb.h"
#include "tests/testing/forwarding_store.h"
#include "tests/testing/status.h"
#include "tests/testing/workflow_sink.h"

namespace outbox {
namespace {

using testing::kHappyPath;

// Forwards to a real store, except that once armed, the first sync asked for
// (RequestSync or Sync) holds durability back until Release: DurableMark
// stays where it was, and Sync blocks (as a blocking sync would for a
// second or more on a slow card).
class HeldDurabilityStore final : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  void Arm() {
    absl::MutexLock l(&mu_);
    armed_ = true;
  }
  // Waits until the hold began; false if it did not within `timeout` (a
  // bound on a stuck test, not a timing).
  bool AwaitHeld(absl::Duration timeout) {
    absl::MutexLock l(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&held_), timeout);
  }
  void Release() {
    std::function<void()> wakeup;
    {
      absl::MutexLock l(&mu_);
      held_ = false;
      wakeup = wakeup_;
    }
    if (wakeup) wakeup();  // the agent looks at DurableMark again
  }

  absl::Status RequestSync(uint64_t mark) override {
    Hold();
    return base_->RequestSync(mark);
  }
  absl::Status Sync() override {
    Hold();
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(
          +[](bool* held) { return !*held; }, &held_));
    }
    return base_->Sync();
  }
  uint64_t DurableMark() const override {
    const uint64_t durable = base_->DurableMark();
    absl::MutexLock l(&mu_);
    return held_ ? std::min(durable, frozen_) : durable;
  }
  void SetWakeup(std::function<void()> wakeup) override {
    {
      absl::MutexLock l(&mu_);
      wakeup_ = wakeup;
    }
    base_->SetWakeup(std::move(wakeup));
  }

 private:
  void Hold() {
    const uint64_t durable = base_->DurableMark();
    absl::MutexLock l(&mu_);
    if (!armed_) return;
    armed_ = false;
    held_ = true;
    frozen_ = durable;
  }

  mutable absl::Mutex mu_;
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t frozen_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void()> wakeup_ ABSL_GUARDED_BY(mu_);
};

class AgentWorkflowSyncTest : public testing::WorkflowSinkTest {
 protected:
  int Count(const std::string& path) {
    int n = 0;
    for (const std::string& p : Paths()) n += p == path;
    return n;
  }
  int OrderSteps() {
    int n = 0;
    for (const std::string& step : kHappyPath) n += Count(step);
    return n;
  }
};

TEST_F(AgentWorkflowSyncTest, AStepWaitingForItsSyncHoldsNoOtherDelivery) {
  HeldDurabilityStore held(store_.get());
  AgentOptions options;
  // (Acknowledgements synced only when idle: their blocking sync is not
  // what this test is about.)
  const std::string config = absl::StrReplaceAll(
      WorkflowConfig(), {{"agent {", R"(agent { ack_sync_interval: "1h")"}});
  ASSERT_NE(config, WorkflowConfig());
  options.config_text = absl::StrCat(
      config, Destination("receipts", "/api/catchall"),
      R"(routes { event_type: "receipt.printed" destination: "receipts" })");
  absl::StatusOr<std::unique_ptr<Agent>> agent =
      Agent::Create(&held, std::move(options));
  ASSERT_OUTBOX_OK(agent);
  CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  held.Arm();  // the order's first write (its first step's sent mark)

  constexpr int kReceipts = 5;
  int receipts_while_held = 0;
  int steps_while_held = -1;
  std::thread watcher([&] {
    if (!held.AwaitHeld(absl::Minutes(1))) return;
    // Committed while the order's mark waits for its sync: the agent must
    // deliver them meanwhile.
    for (int i = 0; i < kReceipts; ++i) CommitPlainEvent("receipt.printed");
    const absl::Time give_up = absl::Now() + absl::Minutes(1);
    while (Count("POST /api/catchall") < kReceipts && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    receipts_while_held = Count("POST /api/catchall");
    steps_while_held = OrderSteps();
    held.Release();
  });
  ASSERT_EQ(DrainUntilEmpty(agent->get()), 0u);
  watcher.join();
  EXPECT_EQ(receipts_while_held, kReceipts);
  // Not even the first step left before its mark was durable.
  EXPECT_EQ(steps_while_held, 0);
  EXPECT_EQ(OrderSteps(), 4);
  EXPECT_EQ(Count("POST /api/catchall"), kReceipts);
}

// The agent plans a workflow's next step from the state it wrote itself,
// not read back, only while no cancel was written since it last read the
// workflow (Store::CancelCount): a cancel committed while the first step's
// sent mark waits for its sync is seen first, and the step never leaves.
TEST_F(AgentWorkflowSyncTest, ACancelWhileAMarkWaitsForItsSyncIsSeenFirst) {
  HeldDurabilityStore held(store_.get());
  AgentOptions options;
  options.config_text = WorkflowConfig();
  absl::StatusOr<std::unique_ptr<Agent>> agent =
      Agent::Create(&held, std::move(options));
  ASSERT_OUTBOX_OK(agent);
  const std::string id =
      CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  held.Arm();  // the order's first write: its first step's sent mark
  std::thread canceller([&] {
    if (!held.AwaitHeld(absl::Minutes(1))) return;
    CancelOrder(id);
    held.Release();
  });
  ASSERT_EQ(DrainUntilEmpty(agent->get()), 0u);
  canceller.join();
  EXPECT_EQ(OrderSteps(), 0);
  absl::StatusOr<WorkflowRecord> record = store_->GetWorkflow(id);
  ASSERT_OUTBOX_OK(record);
  storage::WorkflowState state;
  ASSERT_TRUE(state.ParseFromString(record->state));
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
}

// The agent keeps a workflow's event in memory while its write becomes
// durable (it is not read back): it must be what the store then holds.
TEST_F(AgentWorkflowSyncTest, TheEventKeptInMemoryIsTheOneTheStoreRequeued) {
  CommitOrder(R"({"riskScore": 10})");
  absl::StatusOr<std::vector<PendingEvent>> listed = store_->ListPending(1);
  ASSERT_OUTBOX_OK(listed);
  ASSERT_EQ(listed->size(), 1u);
  AttemptRecord attempt;
  attempt.error = "HTTP 503";
  attempt.http_status = 503;
  attempt.next_attempt = absl::Now();
  ASSERT_OUTBOX_OK(store_->RecordAttempt(listed->at(0), attempt));
  listed = store_->ListPending(1);
  ASSERT_OUTBOX_OK(listed);
  const PendingEvent retried = listed->at(0);
  ASSERT_EQ(retried.attempts, 1);
  ASSERT_EQ(retried.last_http_status, 503);

  Settlement done;
  done.kind = Settlement::Kind::kStepDone;
  done.event = retried;
  ASSERT_OUTBOX_OK(store_->Settle({done}));
  listed = store_->ListPending(1);
  ASSERT_OUTBOX_OK(listed);
  const PendingEvent stored = listed->at(0);
  const PendingEvent kept = RequeuedAfterStepDone(retried, absl::Now());
  EXPECT_EQ(kept.seq, stored.seq);
  EXPECT_EQ(kept.id, stored.id);
  EXPECT_EQ(kept.payload, stored.payload);
  EXPECT_EQ(kept.attempts, stored.attempts);
  EXPECT_EQ(kept.first_attempt, stored.first_attempt);
  EXPECT_EQ(kept.last_attempt, stored.last_attempt);
  EXPECT_EQ(kept.retry_age, stored.retry_age);
  EXPECT_EQ(kept.last_error, stored.last_error);
  EXPECT_EQ(kept.last_http_status, stored.last_http_status);
}

}  // namespace
}  // namespace outbox
