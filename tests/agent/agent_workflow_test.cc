// Copyright (c) edge-outbox authors.
//
// Workflows end to end (issue 13, seed 003's saga): the agent runs an
// order's steps against the real outbox-sink playing inventory, fraud
// check, shipping and billing (--routes), and the tests read what the sink
// received and what the store kept.

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "agent/expr/step_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "platform/reserved_port.h"
#include "proto/storage.pb.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/status.h"
#include "tests/testing/workflow_sink.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using testing::Call;
using testing::Concat;
using testing::kHappyPath;
using testing::kReverts;
using testing::kRoutes;

class AgentWorkflowTest : public testing::WorkflowSinkTest {
 protected:
  // WorkflowConfig with high_value's receiver down: its URL names `port`,
  // bound but not listening (connections are refused), and it is probed
  // once an hour, so no test here waits for its probe.
  std::string HighValueDown(int port) {
    const std::string config = WorkflowConfig();
    const std::string down = absl::StrReplaceAll(
        config, {{absl::StrCat(port_, "/api/high-value"),
                  absl::StrCat(port, "/api/high-value")},
                 {R"(probe_interval_min: "100ms" probe_interval_max: "1s")",
                  R"(probe_interval_min: "1h" probe_interval_max: "1h")"}});
    EXPECT_THAT(down, HasSubstr(absl::StrCat(port, "/api/high-value")));
    EXPECT_THAT(down, HasSubstr(R"(probe_interval_min: "1h")"));
    return down;
  }
};

// An order that goes to high_value at billing (risky, so no revert is owed
// there: international shipping has none).
constexpr char kHighRisk[] =
    R"({"riskScore": 70, "shippingType": "international"})";

TEST_F(AgentWorkflowTest, FourStepsRunInOrderEachWithItsOwnStableId) {
  const std::string id =
      CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  RunToEnd(WorkflowConfig());
  EXPECT_THAT(Paths(), ::testing::ElementsAreArray(kHappyPath));
  const std::vector<Call> calls = Calls();
  const char* steps[] = {"reserve", "fraud", "shipping", "billing"};
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].id, workflow::StepRequestId(id, steps[i], false));
  }
  EXPECT_EQ(State(id).phase(), storage::WORKFLOW_PHASE_COMPLETED);
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 0u);
  EXPECT_EQ(stats->dead_letters, 0u);
  EXPECT_EQ(WorkflowsFinished("completed"), 1);
  EXPECT_EQ(WorkflowsFinished("compensated"), 0);
  EXPECT_EQ(WorkflowsFinished("needs_attention"), 0);
}

TEST_F(AgentWorkflowTest, RoutesOnThePayloadAndOnAnEarlierResponse) {
  CommitOrder(R"({"riskScore": 70, "shippingType": "international"})");
  RunToEnd(WorkflowConfig());
  EXPECT_THAT(Paths(), ElementsAre("POST /api/inventory/reserve",
                                   "POST /api/fraud/check",
                                   "POST /api/international-shipping",
                                   "POST /api/high-value-processing"));
}

TEST_F(AgentWorkflowTest, DeclinedBillingRevertsShippingThenInventory) {
  const std::string id = CommitOrder(
      R"({"riskScore": 10, "shippingType": "domestic", "simulate": "decline"})");
  RunToEnd(WorkflowConfig());
  // Fraud has no revert: skipped. Ids come from the stored responses.
  EXPECT_THAT(Paths(),
              ::testing::ElementsAreArray(Concat(kHappyPath, kReverts)));
  const std::vector<Call> calls = Calls();
  EXPECT_EQ(calls[4].id, workflow::StepRequestId(id, "shipping", true));
  EXPECT_EQ(calls[5].id, workflow::StepRequestId(id, "reserve", true));
  storage::WorkflowState state = State(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_EQ(state.steps(1).status(), storage::STEP_STATUS_NO_REVERT);
  EXPECT_EQ(state.steps(3).status(), storage::STEP_STATUS_FAILED);
  absl::StatusOr<DeadLetter> dead = store_->FindDeadLetter(id);
  ASSERT_OUTBOX_OK(dead);
  EXPECT_THAT(dead->reason, HasSubstr("step billing failed"));
  EXPECT_EQ(WorkflowsFinished("compensated"), 1);
  EXPECT_EQ(WorkflowsFinished("completed"), 0);
}

// A compensation ends without a request (its last revert settled in an
// earlier round): the next order of the key is due at that moment, and one
// Drain must not return before running it.
TEST_F(AgentWorkflowTest, OrderAfterACompensatedOneOfItsKeyRunsInTheSameDrain) {
  CommitOrder(
      R"({"riskScore": 10, "shippingType": "domestic", "simulate": "decline"})");
  CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  std::unique_ptr<Agent> agent = MakeAgent(WorkflowConfig());
  ASSERT_NE(agent, nullptr);
  absl::StatusOr<uint64_t> pending = agent->Drain();
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, 0u);
  EXPECT_EQ(Paths().size(), 10u);  // 4 + 2 reverts, then 4
}

// Shipping's retries never run out here: a full-jitter retry may fall due at
// once, twice in a row, and the workflow would then give up (and compensate)
// inside OrderStuckAtShipping's drain, before the cancel (seen under qemu).
std::string NeverGivingUp(const std::string& config) {
  return absl::StrReplaceAll(config,
                             {{"max_attempts: 3", "max_attempts: 1000"}});
}

TEST_F(AgentWorkflowTest, CancelWhileAStepRetriesStartsNoForwardStepAfter) {
  std::unique_ptr<Agent> agent = MakeAgent(NeverGivingUp(WorkflowConfig()));
  ASSERT_NE(agent, nullptr);
  const std::string id = OrderStuckAtShipping(agent.get());
  CancelOrder(id);
  const size_t before_cancel = Calls().size();
  DrainAll(agent.get());
  const std::vector<Call> calls = Calls();
  ASSERT_GE(calls.size(), before_cancel + 1);
  for (size_t i = before_cancel; i < calls.size(); ++i) {
    EXPECT_THAT(calls[i].path, ::testing::Not(HasSubstr("shipping")))
        << "a forward step after the cancel";
    EXPECT_THAT(calls[i].path, ::testing::Not(HasSubstr("billing")));
  }
  EXPECT_EQ(calls.back().method + " " + calls.back().path,
            "DELETE /api/inventory/RES-1/release");
  storage::WorkflowState state = State(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_TRUE(state.cancelled());
  // Cancelled and compensated: it left the queue, not as a dead letter.
  EXPECT_TRUE(absl::IsNotFound(store_->FindDeadLetter(id).status()));
}

TEST_F(AgentWorkflowTest, CancelOfACompletedWorkflowRevertsItOnce) {
  const std::string id =
      CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  std::unique_ptr<Agent> agent = MakeAgent(WorkflowConfig());
  ASSERT_NE(agent, nullptr);
  DrainAll(agent.get());
  CancelOrder(id);
  CancelOrder(id);  // a second click: a no-op
  DrainAll(agent.get());
  EXPECT_THAT(Paths(),
              ::testing::ElementsAreArray(Concat(kHappyPath, kReverts)));
}

TEST_F(AgentWorkflowTest, TwoEventsOfOneSaleBothRunAllTheirSteps) {
  // The seed resumed by sale and event type, so the second skipped its steps.
  CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  RunToEnd(WorkflowConfig());
  EXPECT_THAT(Paths(),
              ::testing::ElementsAreArray(Concat(kHappyPath, kHappyPath)));
}

TEST_F(AgentWorkflowTest, ARestartResumesAtTheFirstUnfinishedStep) {
  std::string id;
  {
    std::unique_ptr<Agent> agent = MakeAgent(NeverGivingUp(WorkflowConfig()));
    ASSERT_NE(agent, nullptr);
    id = OrderStuckAtShipping(agent.get());
  }
  ASSERT_OUTBOX_OK(store_->Close());
  store_.reset();
  ReopenStore();
  EXPECT_EQ(State(id).next_step(), 2u);
  // Shipping works again (a different payload would be a different event:
  // let the route stop failing instead).
  std::ofstream(routes_path_) << absl::StrReplaceAll(
      kRoutes, {{R"("in": ["ship-down"])", R"("in": ["never"])"}});
  StopSink();
  StartSink({"--routes", routes_path_}, port_);
  RunToEnd(WorkflowConfig());
  std::vector<std::string> paths = Paths();
  EXPECT_EQ(
      std::count(paths.begin(), paths.end(), "POST /api/inventory/reserve"), 1);
  EXPECT_EQ(std::count(paths.begin(), paths.end(), "POST /api/fraud/check"), 1);
  EXPECT_EQ(paths.back(), "POST /api/billing");
  EXPECT_EQ(State(id).phase(), storage::WORKFLOW_PHASE_COMPLETED);
}

TEST_F(AgentWorkflowTest, TemplateValuesArriveEscapedAndEncoded) {
  const std::string tricky = "a\"b/c%d \xC3\xA9";  // ", /, %, space, é
  nlohmann::json payload = {{"riskScore", 10},
                            {"shippingType", "domestic"},
                            {"simulate", "decline"},
                            {"rid", tricky}};
  const std::string id = CommitOrder(payload.dump());
  RunToEnd(WorkflowConfig(
      "/api/inventory/echo",
      "/api/inventory/{{response:reserve:/reservationId}}/release"));
  const std::vector<Call> calls = Calls();
  ASSERT_FALSE(calls.empty());
  // The sink logs the decoded path: the value came back whole, as one
  // segment (its '/' was encoded, so it added no path segment).
  EXPECT_EQ(calls.back().method, "DELETE");
  EXPECT_EQ(calls.back().path,
            absl::StrCat("/api/inventory/", tricky, "/release"));
  EXPECT_EQ(calls.back().status, 200);
}

TEST_F(AgentWorkflowTest, AReferenceThatDoesNotResolveNeedsAttention) {
  const std::string id = CommitOrder(
      R"({"riskScore": 10, "shippingType": "domestic", "simulate": "decline"})");
  RunToEnd(WorkflowConfig("/api/inventory/reserve",
                          "/api/inventory/{{response:reserve:/nope}}"));
  for (const Call& c : Calls()) {
    EXPECT_THAT(c.path, ::testing::Not(HasSubstr("/api/inventory/release")));
    EXPECT_NE(c.method, "DELETE") << "a revert sent with a missing value";
  }
  EXPECT_EQ(State(id).phase(), storage::WORKFLOW_PHASE_NEEDS_ATTENTION);
  absl::StatusOr<DeadLetter> dead = store_->FindDeadLetter(id);
  ASSERT_OUTBOX_OK(dead);
  EXPECT_THAT(dead->reason, HasSubstr("revert of step reserve"));
  EXPECT_THAT(dead->reason, HasSubstr("response:reserve:/nope"));
  EXPECT_EQ(WorkflowsFinished("needs_attention"), 1);
  EXPECT_EQ(WorkflowsFinished("compensated"), 0);
}

// Two steps on one destination that went down: its lane must still get
// its probe. (The gate once looked at the destination once per step; the
// second look found the probe given to the first, closed the lane, and the
// workflow waited forever.)
TEST_F(AgentWorkflowTest, ADestinationUsedByTwoStepsIsProbedWhenItWasDown) {
  const std::string config =
      absl::StrCat(Destination("inventory", "/api/inventory/reserve"), R"(
      agent { probe_interval_min: "50ms" probe_interval_max: "100ms" }
      workflows {
        event_type: "order.created"
        steps { name: "first" destination: "inventory" }
        steps { name: "second" destination: "inventory" }
      })");
  const int port = port_;
  StopSink();
  const std::string id = CommitOrder(R"({"riskScore": 10})");
  std::unique_ptr<Agent> agent = MakeAgent(config);
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->Drain());  // the first step finds it down
  ASSERT_TRUE(agent->stats().offline);
  StartSink({"--routes", routes_path_}, port);
  DrainAll(agent.get());
  EXPECT_THAT(Paths(), ElementsAre("POST /api/inventory/reserve",
                                   "POST /api/inventory/reserve"));
  EXPECT_EQ(State(id).phase(), storage::WORKFLOW_PHASE_COMPLETED);
}

// high_value is down: the orders whose next step needs it wait, and a
// cancelled one of them is compensated meanwhile, at inventory. (The lane
// of the whole workflow type once closed with high_value, and held the
// compensation until high_value's probe.)
TEST_F(AgentWorkflowTest, CompensationIsNotHeldByADestinationItDoesNotUse) {
  absl::StatusOr<std::unique_ptr<ReservedPort>> down = ReservedPort::Reserve();
  ASSERT_OUTBOX_OK(down);
  std::unique_ptr<Agent> agent = MakeAgent(HighValueDown((*down)->port()));
  ASSERT_NE(agent, nullptr);
  const std::string cancelled = CommitOrder(kHighRisk, "sale-1");
  const std::string waiting = CommitOrder(kHighRisk, "sale-2");
  ASSERT_OUTBOX_OK(agent->Drain());  // both reach billing: refused
  ASSERT_EQ(State(cancelled).next_step(), 3u);
  ASSERT_EQ(State(waiting).next_step(), 3u);
  CancelOrder(cancelled);
  ASSERT_OUTBOX_OK(agent->Drain());
  const storage::WorkflowState state = State(cancelled);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  const std::string reservation =
      nlohmann::json::parse(state.steps(0).response())
          .value("reservationId", "");
  EXPECT_THAT(Paths(), ::testing::Contains(absl::StrCat(
                           "DELETE /api/inventory/", reservation, "/release")));
  EXPECT_EQ(State(waiting).phase(), storage::WORKFLOW_PHASE_FORWARD);
  EXPECT_EQ(State(waiting).next_step(), 3u);
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 1u);
}

// high_value is down and an order waits for it: another order, whose
// steps go elsewhere, runs to its end, and so does a plain event.
TEST_F(AgentWorkflowTest,
       ADownTargetHoldsOnlyTheWorkflowsWhoseNextStepNeedsIt) {
  absl::StatusOr<std::unique_ptr<ReservedPort>> down = ReservedPort::Reserve();
  ASSERT_OUTBOX_OK(down);
  std::unique_ptr<Agent> agent = MakeAgent(absl::StrCat(
      HighValueDown((*down)->port()), Destination("receipts", "/api/catchall"),
      R"(routes { event_type: "receipt.printed" destination: "receipts" })"));
  ASSERT_NE(agent, nullptr);
  const std::string waiting = CommitOrder(kHighRisk, "sale-1");
  ASSERT_OUTBOX_OK(agent->Drain());  // at billing: refused
  ASSERT_EQ(State(waiting).next_step(), 3u);
  const std::string other =
      CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})", "sale-2");
  CommitPlainEvent("receipt.printed");
  ASSERT_OUTBOX_OK(agent->Drain());
  EXPECT_EQ(State(other).phase(), storage::WORKFLOW_PHASE_COMPLETED);
  EXPECT_THAT(Paths(), ::testing::Contains("POST /api/catchall"));
  EXPECT_EQ(State(waiting).phase(), storage::WORKFLOW_PHASE_FORWARD);
  EXPECT_EQ(State(waiting).next_step(), 3u);
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 1u);
}

// A first step whose destination is known down is not even marked sent:
// nothing of the workflow is written (so a cancel meanwhile has nothing in
// doubt to resend).
TEST_F(AgentWorkflowTest, AFirstStepWhoseTargetIsDownIsNotMarked) {
  absl::StatusOr<std::unique_ptr<ReservedPort>> down = ReservedPort::Reserve();
  ASSERT_OUTBOX_OK(down);
  // Risky orders go to high_value, the others to inventory, which is up: the
  // lane of the type stays open, and the risky order is planned.
  std::unique_ptr<Agent> agent = MakeAgent(absl::StrCat(
      Destination("inventory", "/api/inventory/reserve"),
      "destinations { name: \"high_value\" url: \"http://127.0.0.1:",
      (*down)->port(), R"(/" }
      agent { probe_interval_min: "1h" probe_interval_max: "1h" }
      workflows {
        event_type: "order.created"
        steps {
          name: "charge"
          choose {
            destination: "high_value"
            when { value: "request:/riskScore" op: "gt" expected: "50" }
          }
          choose { destination: "inventory" }
        }
      })"));
  ASSERT_NE(agent, nullptr);
  CommitOrder(kHighRisk, "sale-1");
  ASSERT_OUTBOX_OK(agent->Drain());  // marked, sent, refused: known down
  const std::string held = CommitOrder(kHighRisk, "sale-2");
  ASSERT_OUTBOX_OK(agent->Drain());
  EXPECT_TRUE(absl::IsNotFound(store_->GetWorkflow(held).status()))
      << "a state was written for a step that cannot be sent";
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 2u);
}

}  // namespace
}  // namespace outbox
