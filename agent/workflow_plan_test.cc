// Copyright (c) edge-outbox authors.
//
// The workflow engine's decisions without sockets: what is planned from a
// stored state, and what an answer turns it into.

#include "agent/workflow_plan.h"

#include <string>

#include "agent/workflow/step_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

constexpr char kConfig[] = R"(
  destinations { name: "inventory" url: "http://127.0.0.1:1/reserve" }
  destinations { name: "fraud" url: "http://127.0.0.1:1/fraud" }
  destinations { name: "gift" url: "http://127.0.0.1:1/gift" }
  workflows {
    event_type: "order.created"
    payloads: "per_step"
    steps {
      name: "reserve" destination: "inventory"
      revert { url: "http://127.0.0.1:1/release/{{response:reserve:/id}}"
               method: "DELETE" }
    }
    steps {
      name: "wrap"
      choose { destination: "gift"
               when { value: "request:/gift" op: "eq" expected: "true" } }
    }
    steps { name: "fraud" destination: "fraud" }
  }
)";

class WorkflowPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<AgentConfig> config =
        ParseAgentConfig(kConfig, "cfg.textproto");
    ASSERT_OUTBOX_OK(config);
    config_ = *std::move(config);
    event_.id = "01940f4e-6f35-7c1a-9a51-3f0c1d9e2b77";
    event_.type = "order.created";
    event_.payload =
        R"({"reserve": {"sku": "A"}, "wrap": {"gift": false}, "fraud": {}})";
  }
  const workflow::WorkflowSpec& spec() const { return config_.workflows[0]; }

  WorkflowAction Plan(const WorkflowRecord* record = nullptr) {
    return PlanWorkflow(spec(), config_, event_, record, now_);
  }

  // The record the store would hold after `s` was written.
  WorkflowRecord After(const Settlement& s) {
    WorkflowRecord r;
    r.state = s.workflow_state;
    return r;
  }

  Settlement Answer(const WorkflowAction& a, int status,
                    const std::string& body) {
    HttpResult result;
    result.http_status = status;
    result.body = body;
    Decision d;
    d.kind = status / 100 == 2 ? Decision::Kind::kDelivered
                               : Decision::Kind::kDeadLetter;
    d.http_status = status;
    d.error = absl::StrCat("HTTP ", status);
    return WorkflowSettlement(a, spec(), d, result, event_, config_.agent,
                              now_);
  }

  AgentConfig config_;
  PendingEvent event_;
  absl::Time now_ = absl::FromUnixSeconds(1796000000);
};

TEST_F(WorkflowPlanTest, EachStepGetsItsOwnMemberOfThePayload) {
  WorkflowAction a = Plan();
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_EQ(a.step, 0u);
  EXPECT_EQ(a.body, R"({"sku":"A"})");
  EXPECT_EQ(a.request_id, workflow::StepRequestId(event_.id, "reserve", false));
  EXPECT_EQ(a.url, "http://127.0.0.1:1/reserve");
}

TEST_F(WorkflowPlanTest, AStepWhoseConditionsFailIsRecordedAsSkipped) {
  Settlement done = Answer(Plan(), 200, R"({"id": "R1"})");
  EXPECT_EQ(done.kind, Settlement::Kind::kStepDone);
  WorkflowRecord record = After(done);
  WorkflowAction a = Plan(&record);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_EQ(a.step, 2u);  // wrap skipped: not a gift
  EXPECT_EQ(a.state.steps(1).status(), storage::STEP_STATUS_SKIPPED);
  ASSERT_EQ(a.rows.size(), 1u);
  EXPECT_EQ(a.rows[0].outcome(), "skipped");
}

TEST_F(WorkflowPlanTest, AMissingPayloadMemberFailsTheStepAndCompensates) {
  event_.payload = R"({"reserve": {"sku": "A"}, "wrap": {"gift": false}})";
  WorkflowRecord record = After(Answer(Plan(), 200, R"({"id": "R 1/2"})"));
  WorkflowAction a = Plan(&record);
  // fraud has no member: reserve is reverted, its id percent-encoded.
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_TRUE(a.revert);
  EXPECT_EQ(a.step, 0u);
  EXPECT_EQ(a.method, "DELETE");
  EXPECT_EQ(a.url, "http://127.0.0.1:1/release/R%201%2F2");
  EXPECT_THAT(a.state.cause(), HasSubstr("no member \"fraud\""));
}

TEST_F(WorkflowPlanTest, ACancelBeforeAnyStepSendsNothing) {
  WorkflowRecord record;
  record.cancelled = true;
  record.cancel_reason = "changed mind";
  WorkflowAction a = Plan(&record);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSettle);
  EXPECT_EQ(a.settle, Settlement::Kind::kDelivered);
  EXPECT_EQ(a.state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_TRUE(a.state.cancelled());
}

TEST_F(WorkflowPlanTest, ACancelAfterAStepRevertsItAndNoForwardStepFollows) {
  WorkflowRecord record = After(Answer(Plan(), 200, R"({"id": "R1"})"));
  record.cancelled = true;
  WorkflowAction a = Plan(&record);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_TRUE(a.revert);
  Settlement reverted = Answer(a, 200, "{}");
  WorkflowRecord after = After(reverted);
  after.cancelled = true;
  WorkflowAction end = Plan(&after);
  EXPECT_EQ(end.kind, WorkflowAction::Kind::kSettle);
  EXPECT_EQ(end.state.steps(0).status(), storage::STEP_STATUS_REVERTED);
}

TEST_F(WorkflowPlanTest, AFailedRevertNeedsAttentionAndIsNotCompensated) {
  WorkflowRecord record = After(Answer(Plan(), 200, R"({"id": "R1"})"));
  record.cancelled = true;
  Settlement failed = Answer(Plan(&record), 400, "no");
  EXPECT_EQ(failed.kind, Settlement::Kind::kDeadLetter);
  EXPECT_THAT(failed.reason, HasSubstr("needs attention"));
  storage::WorkflowState state;
  ASSERT_TRUE(state.ParseFromString(failed.workflow_state));
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_NEEDS_ATTENTION);
  EXPECT_EQ(state.steps(0).status(), storage::STEP_STATUS_REVERT_FAILED);
}

TEST_F(WorkflowPlanTest, ResultRowsAreNumberedAfterThoseStored) {
  Settlement first = Answer(Plan(), 200, R"({"id": "R1"})");
  EXPECT_EQ(first.first_result, 0u);
  EXPECT_EQ(first.workflow_results.size(), 1u);
  WorkflowRecord record = After(first);
  Settlement second = Answer(Plan(&record), 200, "{}");
  // The skip of "wrap" and fraud's answer, after reserve's row.
  EXPECT_EQ(second.first_result, 1u);
  EXPECT_EQ(second.workflow_results.size(), 2u);
}

TEST_F(WorkflowPlanTest, ALongBodyIsCutInTheResultTableOnly) {
  config_.agent.result_body_bytes = 4;
  Settlement s = Answer(Plan(), 200, R"({"id": "R1"})");
  storage::StepResult row;
  ASSERT_TRUE(row.ParseFromString(s.workflow_results[0]));
  EXPECT_EQ(row.response_body(), R"({"id)");
  EXPECT_TRUE(row.response_truncated());
  storage::WorkflowState state;
  ASSERT_TRUE(state.ParseFromString(s.workflow_state));
  EXPECT_EQ(state.steps(0).response(), R"({"id": "R1"})");
}

TEST_F(WorkflowPlanTest, StepsChangedUnderAWorkflowStopItWithoutSending) {
  WorkflowRecord record = After(Answer(Plan(), 200, R"({"id": "R1"})"));
  config_.workflows[0].steps[0].name = "hold";
  WorkflowAction a = Plan(&record);
  EXPECT_EQ(a.kind, WorkflowAction::Kind::kSettle);
  EXPECT_EQ(a.settle, Settlement::Kind::kDeadLetterUnsent);
  EXPECT_THAT(a.reason, HasSubstr("steps changed"));
  EXPECT_EQ(a.state.phase(), storage::WORKFLOW_PHASE_NEEDS_ATTENTION);
}

}  // namespace
}  // namespace outbox
