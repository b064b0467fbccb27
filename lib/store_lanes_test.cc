// Copyright (c) edge-outbox authors.
//
// Store::Relane: a workflow event moved to the lane of the destination its
// next request needs is gated with that lane alone; a step done, a cancel
// (committed after, or racing the plan that relaned it) and a reopen put it
// back in its untargeted lane.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakeEvent;

class StoreLanesTest : public testing::StoreTest {
 protected:
  // The ids NextDue gives with every lane targeted at `closed` closed, and
  // the targets of the lanes it asked about.
  std::vector<std::string> DueUnless(const std::string& closed,
                                     std::vector<std::string>* targets) {
    std::vector<std::string> ids;
    absl::StatusOr<DueEvents> due = store_->NextDue(
        100,
        [&](const Lane& lane) {
          targets->emplace_back(lane.target);
          return lane.target == closed ? LaneGate::kClosed : LaneGate::kOpen;
        },
        [](uint64_t) { return false; });
    EXPECT_TRUE(due.ok()) << due.status();
    if (!due.ok()) return ids;
    for (const PendingEvent& e : due->events) ids.push_back(e.id);
    return ids;
  }
  std::vector<std::string> DueUnless(const std::string& closed) {
    std::vector<std::string> targets;
    return DueUnless(closed, &targets);
  }

  void Cancel(const std::string& id) {
    Txn txn;
    txn.Put("sales", "sale-1", "cancelled");
    txn.Cancel(id, "customer cancelled");
    ASSERT_OUTBOX_OK(store_->Commit(txn));
  }
};

TEST_F(StoreLanesTest, ARelanedEventIsGatedByItsTargetAlone) {
  const std::string held = CommitEvent(MakeEvent("order.created", "sale-1"));
  const std::string other = CommitEvent(MakeEvent("order.created", "sale-2"));
  store_->Relane(DueWithId(held), "high_value", /*saw_cancel=*/false);
  std::vector<std::string> targets;
  EXPECT_THAT(DueUnless("high_value", &targets), ElementsAre(other));
  EXPECT_THAT(targets, ::testing::UnorderedElementsAre("", "high_value"));
  EXPECT_THAT(DueUnless("nothing"), ElementsAre(held, other));
}

TEST_F(StoreLanesTest, AStepDoneUntargetsTheEvent) {
  const std::string id = CommitEvent(MakeEvent("order.created", "sale-1"));
  store_->Relane(DueWithId(id), "high_value", /*saw_cancel=*/false);
  ASSERT_THAT(DueUnless("high_value"), IsEmpty());
  Settlement s;
  s.kind = Settlement::Kind::kStepDone;
  s.event = DueWithId(id);
  ASSERT_OUTBOX_OK(store_->Settle({s}));
  EXPECT_THAT(DueUnless("high_value"), ElementsAre(id));
}

TEST_F(StoreLanesTest, ACancelUntargetsTheEvent) {
  const std::string id = CommitEvent(MakeEvent("order.created", "sale-1"));
  store_->Relane(DueWithId(id), "high_value", /*saw_cancel=*/false);
  ASSERT_THAT(DueUnless("high_value"), IsEmpty());
  Cancel(id);
  EXPECT_THAT(DueUnless("high_value"), ElementsAre(id));
}

TEST_F(StoreLanesTest, ACancelThePlanDidNotSeeKeepsTheEventUntargeted) {
  const std::string id = CommitEvent(MakeEvent("order.created", "sale-1"));
  const PendingEvent event = DueWithId(id);
  Cancel(id);  // after the plan read the workflow, before it relanes
  store_->Relane(event, "high_value", /*saw_cancel=*/false);
  EXPECT_THAT(DueUnless("high_value"), ElementsAre(id));
  // A plan that saw it may hold the compensation behind its own target.
  store_->Relane(event, "high_value", /*saw_cancel=*/true);
  EXPECT_THAT(DueUnless("high_value"), IsEmpty());
}

TEST_F(StoreLanesTest, AReopenUntargetsEveryEvent) {
  const std::string id = CommitEvent(MakeEvent("order.created", "sale-1"));
  store_->Relane(DueWithId(id), "high_value", /*saw_cancel=*/false);
  ASSERT_THAT(DueUnless("high_value"), IsEmpty());
  Reopen();
  EXPECT_THAT(DueUnless("high_value"), ElementsAre(id));
}

}  // namespace
}  // namespace outbox
