// Copyright (c) edge-outbox authors.
//
// The workflow engine's decisions without sockets: what is planned from a
// stored state, and what an answer turns it into.

#include "agent/workflow/plan.h"

#include <map>
#include <string>
#include <vector>

#include "agent/config/workflow_rows.h"
#include "agent/expr/step_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/workflow_rows.h"
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
      on_no_match: "skip"
      choose { destination: "gift"
               when { value: "request:/gift" op: "eq" expected: "true" } }
    }
    steps {
      name: "fraud" destination: "fraud"
      revert { url: "http://127.0.0.1:1/fraud/{{response:fraud:/case}}" }
    }
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

  // The next plan once any sent mark it asks for is written (kMark: the
  // agent writes it and plans again).
  WorkflowAction Plan(const WorkflowRecord* record = nullptr) {
    WorkflowAction a = PlanWorkflow(spec(), config_, event_, record, now_);
    if (a.kind != WorkflowAction::Kind::kMark) return a;
    WorkflowRecord marked = After(MarkSettlement(a, event_));
    if (record != nullptr) marked.cancelled = record->cancelled;
    return PlanWorkflow(spec(), config_, event_, &marked, now_);
  }

  // The record the store would hold after `s` was written: a state
  // written as rows comes back assembled (lib/workflow_rows.h), without
  // requests, with only the answers kept.
  WorkflowRecord After(const Settlement& s) {
    WorkflowRecord r;
    r.state = s.workflow_state;
    storage::WorkflowState state;
    if (state.ParseFromString(r.state) && state.rows()) {
      std::vector<storage::WorkflowStep> steps;
      std::map<uint32_t, storage::StepAnswer> answers;
      for (int i = 0; i < state.steps_size(); ++i) {
        steps.push_back(workflow_rows::StepOf(state.steps(i)));
        answers[static_cast<uint32_t>(i)].set_body(state.steps(i).response());
      }
      r.state =
          workflow_rows::Assemble(workflow_rows::HeadOf(state), steps, answers)
              .SerializeAsString();
    }
    return r;
  }
  WorkflowRecord CancelledAfter(const Settlement& s) {
    WorkflowRecord r = After(s);
    r.cancelled = true;
    r.cancel_reason = "changed mind";
    return r;
  }
  // As the store writes `s` when a cancel was recorded before it: without
  // the sent mark it sets (Settlement::workflow_marked_step).
  WorkflowRecord CancelledBefore(const Settlement& s) {
    WorkflowRecord r = CancelledAfter(s);
    storage::WorkflowState state;
    EXPECT_TRUE(state.ParseFromString(r.state));
    if (s.workflow_marked_step >= 0) {
      state.mutable_steps(s.workflow_marked_step)->set_sent(false);
    }
    r.state = state.SerializeAsString();
    return r;
  }

  // Reserve answered 2xx (fraud marked next), then a cancel.
  WorkflowRecord ReservedThenCancelled() {
    return CancelledAfter(Answer(Plan(), 200, R"({"id": "R1"})"));
  }
  // `a` is the revert of step `step`.
  static void ExpectRevertOf(const WorkflowAction& a, size_t step) {
    ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
    EXPECT_TRUE(a.revert);
    EXPECT_EQ(a.step, step);
  }

  // `s` ends the workflow NEEDS_ATTENTION, its revert of step 0 failed for
  // good, for a reason that says `why`.
  static void ExpectRevertFailedForGood(const Settlement& s,
                                        const std::string& why) {
    EXPECT_EQ(s.kind, Settlement::Kind::kDeadLetter);
    EXPECT_THAT(s.reason, HasSubstr(why));
    storage::WorkflowState state;
    ASSERT_TRUE(state.ParseFromString(s.workflow_state));
    EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_NEEDS_ATTENTION);
    EXPECT_EQ(state.steps(0).status(), storage::STEP_STATUS_REVERT_FAILED);
  }

  // `a`'s answer as Decide() makes it: `status` 0 is a transport error
  // after the request left (no HTTP answer); `retry` a retry scheduled.
  // `cut`: the body is the beginning of a longer answer.
  Settlement Answer(const WorkflowAction& a, int status,
                    const std::string& body, bool retry = false,
                    bool cut = false) {
    HttpResult result;
    result.http_status = status;
    result.body = body;
    result.body_truncated = cut;
    if (status == 0) result.transport = absl::UnavailableError("reset");
    Decision d;
    d.kind = retry               ? Decision::Kind::kRetry
             : status / 100 == 2 ? Decision::Kind::kDelivered
                                 : Decision::Kind::kDeadLetter;
    d.http_status = status;
    d.error = absl::StrCat("HTTP ", status);
    return WorkflowSettlement(a, spec(), d, result, event_, config_, now_);
  }

  static Decision Delivered() {
    Decision d;
    d.kind = Decision::Kind::kDelivered;
    d.http_status = 200;
    return d;
  }
  static HttpResult Answered(int status, const std::string& body) {
    HttpResult result;
    result.http_status = status;
    result.body = body;
    return result;
  }

  // The fixture's configuration with `from` replaced by `to`.
  void Reconfigure(const std::string& from, const std::string& to) {
    std::string text = kConfig;
    ASSERT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
    absl::StatusOr<AgentConfig> config =
        ParseAgentConfig(text, "cfg.textproto");
    ASSERT_OUTBOX_OK(config);
    config_ = *std::move(config);
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
  // Decided with reserve's answer, when fraud was marked as next.
  ASSERT_EQ(done.workflow_results.size(), 2u);
  storage::StepResult skip;
  ASSERT_TRUE(skip.ParseFromString(done.workflow_results[1]));
  EXPECT_EQ(skip.outcome(), "skipped");
  WorkflowRecord record = After(done);
  WorkflowAction a = Plan(&record);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_EQ(a.step, 2u);  // wrap skipped: not a gift
  EXPECT_EQ(a.state.steps(1).status(), storage::STEP_STATUS_SKIPPED);
  EXPECT_TRUE(a.rows.empty());
}

TEST_F(WorkflowPlanTest, AStepWhoseChooseMatchesNothingFailsByDefault) {
  Reconfigure(R"(on_no_match: "skip")", "");
  Settlement done = Answer(Plan(), 200, R"({"id": "R1"})");
  WorkflowRecord record = After(done);
  WorkflowAction a = Plan(&record);
  ExpectRevertOf(a, 0);  // reserve undone: wrap matched nothing
  EXPECT_EQ(a.state.steps(1).status(), storage::STEP_STATUS_FAILED);
  EXPECT_THAT(a.state.cause(),
              HasSubstr("step wrap failed: no `choose` target's conditions "
                        "hold (on_no_match: fail)"));
}

TEST_F(WorkflowPlanTest, ARevertStopsAtItsOwnMaxAttempts) {
  Reconfigure(R"(method: "DELETE" })", R"(method: "DELETE" max_attempts: 2 })");
  WorkflowRecord record =
      CancelledBefore(Answer(Plan(), 200, R"({"id": "R1"})"));
  const WorkflowAction revert = Plan(&record);
  ExpectRevertOf(revert, 0);
  EXPECT_EQ(Answer(revert, 503, "", /*retry=*/true).kind,
            Settlement::Kind::kAttempt);  // attempt 1 of 2
  event_.attempts = 1;
  ExpectRevertFailedForGood(Answer(revert, 503, "", /*retry=*/true),
                            "max_attempts (2) are spent");
}

TEST_F(WorkflowPlanTest, WithoutMaxAttemptsTheSchedulesDecisionStands) {
  WorkflowRecord record =
      CancelledBefore(Answer(Plan(), 200, R"({"id": "R1"})"));
  event_.attempts = 50;
  EXPECT_EQ(Answer(Plan(&record), 503, "", /*retry=*/true).kind,
            Settlement::Kind::kAttempt);
}

TEST_F(WorkflowPlanTest, AReferenceIntoACutAnswerSaysItWasCut) {
  WorkflowRecord record = CancelledBefore(
      Answer(Plan(), 200, R"({"id": "R)", /*retry=*/false, /*cut=*/true));
  WorkflowAction a = Plan(&record);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSettle);
  EXPECT_EQ(a.state.phase(), storage::WORKFLOW_PHASE_NEEDS_ATTENTION);
  EXPECT_THAT(a.reason,
              HasSubstr("the response of step \"reserve\" was cut "
                        "at 9 bytes (agent.workflow_response_bytes)"));
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
  WorkflowRecord record =
      CancelledBefore(Answer(Plan(), 200, R"({"id": "R1"})"));
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
  WorkflowRecord record =
      CancelledBefore(Answer(Plan(), 200, R"({"id": "R1"})"));
  ExpectRevertFailedForGood(Answer(Plan(&record), 400, "no"),
                            "needs attention");
}

TEST_F(WorkflowPlanTest, ResultRowsAreNumberedAfterThoseStored) {
  Settlement first = Answer(Plan(), 200, R"({"id": "R1"})");
  EXPECT_EQ(first.first_result, 0u);
  EXPECT_EQ(first.workflow_results.size(), 2u);  // reserve's, wrap's skip
  WorkflowRecord record = After(first);
  Settlement second = Answer(Plan(&record), 200, "{}");
  // Fraud's answer, after those two.
  EXPECT_EQ(second.first_result, 2u);
  EXPECT_EQ(second.workflow_results.size(), 1u);
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

// --- Sent marks and steps in doubt ----------------------------------------

TEST_F(WorkflowPlanTest, TheFirstStepIsMarkedSentDurablyBeforeItIsSent) {
  WorkflowAction a = PlanWorkflow(spec(), config_, event_, nullptr, now_);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kMark);
  EXPECT_EQ(a.step, 0u);
  const Settlement mark = MarkSettlement(a, event_);
  EXPECT_EQ(mark.kind, Settlement::Kind::kStepDone);  // synced, due at once
  EXPECT_EQ(mark.workflow_marked_step, 0);
  EXPECT_TRUE(SettlesMarkOnly(mark));
  WorkflowRecord marked = After(mark);
  WorkflowAction send = PlanWorkflow(spec(), config_, event_, &marked, now_);
  ASSERT_EQ(send.kind, WorkflowAction::Kind::kSend);
  EXPECT_TRUE(send.state.steps(0).sent());
}

TEST_F(WorkflowPlanTest, AStepsTwoXxMarksTheNextStepSentInTheSameWrite) {
  Settlement done = Answer(Plan(), 200, R"({"id": "R1"})");
  EXPECT_EQ(done.workflow_marked_step, 2);  // wrap skipped on the way
  EXPECT_FALSE(SettlesMarkOnly(done));
  WorkflowRecord record = After(done);
  WorkflowAction a = PlanWorkflow(spec(), config_, event_, &record, now_);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);  // no write of its own
  EXPECT_EQ(a.step, 2u);
}

TEST_F(WorkflowPlanTest, TheLastStepsTwoXxCompletesTheWorkflowInTheSameWrite) {
  WorkflowRecord reserved = After(Answer(Plan(), 200, R"({"id": "R1"})"));
  Settlement last = Answer(Plan(&reserved), 200, R"({"case": "C1"})");
  // A delivery: no sync of its own is waited on, and no fifth round.
  EXPECT_EQ(last.kind, Settlement::Kind::kDelivered);
  EXPECT_EQ(last.workflow_marked_step, -1);
  storage::WorkflowState state;
  ASSERT_TRUE(state.ParseFromString(last.workflow_state));
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPLETED);
  EXPECT_EQ(state.finished_unix_ms(), absl::ToUnixMillis(now_));
  EXPECT_EQ(state.steps(2).status(), storage::STEP_STATUS_DONE);
  EXPECT_EQ(state.results(), 3u);  // reserve, wrap skipped, fraud
}

// The agent plans a step from the state it wrote (PlanWorkflowFrom) when no
// cancel came since: that must be the plan a read of the store would give.
TEST_F(WorkflowPlanTest, PlanningFromTheWrittenStateIsPlanningFromTheStore) {
  for (const bool rows : {false, true}) {
    workflow::TEST_SetWriteRows(rows);
    WorkflowAction first = PlanWorkflow(spec(), config_, event_, nullptr, now_);
    storage::WorkflowState written;
    Settlement s = MarkSettlement(first, event_, &written);
    for (int step = 0; step < 2; ++step) {
      const WorkflowRecord stored = After(s);
      const WorkflowAction read =
          PlanWorkflow(spec(), config_, event_, &stored, now_);
      const WorkflowAction kept =
          PlanWorkflowFrom(spec(), config_, event_, written, now_);
      ASSERT_EQ(kept.kind, WorkflowAction::Kind::kSend);
      EXPECT_EQ(kept.kind, read.kind);
      EXPECT_EQ(kept.step, read.step);
      EXPECT_EQ(kept.url, read.url);
      EXPECT_EQ(kept.body, read.body);
      EXPECT_EQ(kept.request_id, read.request_id);
      EXPECT_EQ(kept.state.SerializeAsString(), read.state.SerializeAsString());
      s = WorkflowSettlement(kept, spec(), Delivered(), Answered(200, "{}"),
                             event_, config_, now_, &written);
    }
  }
  workflow::TEST_SetWriteRows(std::nullopt);
}

TEST_F(WorkflowPlanTest, AStepWithARetryPendingAtACancelIsResentUnderItsId) {
  WorkflowRecord record = After(Answer(Plan(), 200, R"({"id": "R1"})"));
  // Fraud's answer was lost: a retry is scheduled, then the cancel lands.
  Settlement lost = Answer(Plan(&record), 0, "", /*retry=*/true);
  EXPECT_EQ(lost.kind, Settlement::Kind::kAttempt);
  WorkflowRecord cancelled = CancelledAfter(lost);
  WorkflowAction a = Plan(&cancelled);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_FALSE(a.revert);
  EXPECT_TRUE(a.resend);
  EXPECT_EQ(a.step, 2u);
  EXPECT_EQ(a.request_id, workflow::StepRequestId(event_.id, "fraud", false));
  EXPECT_EQ(a.body, "{}");
  EXPECT_EQ(a.url, "http://127.0.0.1:1/fraud");
  EXPECT_EQ(a.state.steps(2).status(), storage::STEP_STATUS_IN_DOUBT);
}

TEST_F(WorkflowPlanTest, AMarkedStepWithNoResultAtACancelIsResent) {
  // A power cut took fraud's 2xx before its result was written: only the
  // mark, written with reserve's result, says it may have gone out.
  WorkflowRecord cancelled = ReservedThenCancelled();
  WorkflowAction a = Plan(&cancelled);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_TRUE(a.resend);
  EXPECT_EQ(a.request_id, workflow::StepRequestId(event_.id, "fraud", false));
}

TEST_F(WorkflowPlanTest, AStepNeverMarkedIsNotSentAfterACancel) {
  WorkflowRecord cancelled =
      CancelledBefore(Answer(Plan(), 200, R"({"id": "R1"})"));
  ExpectRevertOf(Plan(&cancelled), 0);
}

TEST_F(WorkflowPlanTest, AMarkedStepKnownNeverSentIsUnmarkedNotResent) {
  WorkflowRecord cancelled = ReservedThenCancelled();
  const Settlement unmarked = NotDoneSettlement(Plan(&cancelled), event_);
  EXPECT_EQ(unmarked.kind, Settlement::Kind::kStepDone);  // synced first
  EXPECT_TRUE(SettlesMarkOnly(unmarked));
  WorkflowRecord after = CancelledAfter(unmarked);
  ExpectRevertOf(Plan(&after), 0);
}

TEST_F(WorkflowPlanTest, AResentStepsTwoXxIsRevertedFirstThenTheOthers) {
  WorkflowRecord cancelled = ReservedThenCancelled();
  Settlement resent = Answer(Plan(&cancelled), 200, R"({"case": "C7"})");
  EXPECT_EQ(resent.kind, Settlement::Kind::kStepDone);
  WorkflowRecord after = CancelledAfter(resent);
  WorkflowAction first = Plan(&after);
  ASSERT_EQ(first.kind, WorkflowAction::Kind::kSend);
  EXPECT_TRUE(first.revert);
  EXPECT_EQ(first.url, "http://127.0.0.1:1/fraud/C7");
  WorkflowRecord reverted = CancelledAfter(Answer(first, 200, "{}"));
  WorkflowAction second = Plan(&reverted);
  ASSERT_EQ(second.kind, WorkflowAction::Kind::kSend);
  EXPECT_TRUE(second.revert);
  EXPECT_EQ(second.url, "http://127.0.0.1:1/release/R1");
}

TEST_F(WorkflowPlanTest, ARejectedResendCountsAsNotDoneAndIsNotReverted) {
  WorkflowRecord cancelled = ReservedThenCancelled();
  Settlement rejected = Answer(Plan(&cancelled), 409, "no");
  EXPECT_EQ(rejected.kind, Settlement::Kind::kStepDone);
  WorkflowRecord after = CancelledAfter(rejected);
  WorkflowAction a = Plan(&after);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_TRUE(a.revert);
  EXPECT_EQ(a.step, 0u);  // fraud skipped: it did not happen
  EXPECT_EQ(a.state.steps(2).status(), storage::STEP_STATUS_FAILED);
}

TEST_F(WorkflowPlanTest, AResendWhoseRetriesRunOutUnansweredNeedsAttention) {
  WorkflowRecord cancelled = ReservedThenCancelled();
  Settlement unknown = Answer(Plan(&cancelled), 0, "");
  EXPECT_EQ(unknown.kind, Settlement::Kind::kDeadLetter);
  EXPECT_THAT(unknown.reason, HasSubstr("needs attention: step fraud"));
  EXPECT_THAT(unknown.reason, HasSubstr("may have happened"));
  storage::WorkflowState state;
  ASSERT_TRUE(state.ParseFromString(unknown.workflow_state));
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_NEEDS_ATTENTION);
  EXPECT_EQ(state.steps(0).status(), storage::STEP_STATUS_DONE);  // kept
}

TEST_F(WorkflowPlanTest, AStepOutOfRetriesWithoutAnAnswerIsResentFirst) {
  WorkflowRecord record = After(Answer(Plan(), 200, R"({"id": "R1"})"));
  // Fraud's last attempt got no answer at all: it may have happened.
  WorkflowRecord after = After(Answer(Plan(&record), 0, ""));
  WorkflowAction a = Plan(&after);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_TRUE(a.resend);
  EXPECT_EQ(a.step, 2u);
}

// The same engine writing rows (agent/config/workflow_rows.h): what the store
// gives back has no requests and only the answers a reference reads.
class WorkflowPlanRowsTest : public WorkflowPlanTest {
 protected:
  void SetUp() override {
    WorkflowPlanTest::SetUp();
    workflow::TEST_SetWriteRows(true);
  }
  void TearDown() override { workflow::TEST_SetWriteRows(std::nullopt); }
  static storage::WorkflowState StateOf(const WorkflowRecord& r) {
    storage::WorkflowState state;
    EXPECT_TRUE(state.ParseFromString(r.state));
    return state;
  }
};

TEST_F(WorkflowPlanRowsTest,
       AnswersAreKeptOnlyForStepsAReferenceOrRevertReads) {
  // reserve's and fraud's reverts read their answers; wrap's nobody reads.
  ASSERT_EQ(spec().steps.size(), 3u);
  EXPECT_TRUE(spec().steps[0].keep_answer);
  EXPECT_FALSE(spec().steps[1].keep_answer);
  EXPECT_TRUE(spec().steps[2].keep_answer);
  // A later step's condition reads an answer too; nothing reads the others.
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(R"(
    destinations { name: "a" url: "http://127.0.0.1:1/a" }
    workflows {
      event_type: "t"
      steps { name: "one" destination: "a" }
      steps {
        name: "two"
        choose { destination: "a"
                 when { value: "response:one:/x" op: "eq" expected: "1" } }
      }
      steps { name: "three" destination: "a" }
    }
  )",
                                                        "cfg.textproto");
  ASSERT_OUTBOX_OK(config);
  ASSERT_EQ(config->workflows[0].steps.size(), 3u);
  EXPECT_TRUE(config->workflows[0].steps[0].keep_answer);
  EXPECT_FALSE(config->workflows[0].steps[1].keep_answer);
  EXPECT_FALSE(config->workflows[0].steps[2].keep_answer);
}

TEST_F(WorkflowPlanRowsTest, AnAnswerNobodyReadsIsNotKept) {
  Reconfigure(
      R"(revert { url: "http://127.0.0.1:1/fraud/{{response:fraud:/case}}" })",
      "");
  WorkflowRecord reserved = After(Answer(Plan(), 200, R"({"id": "R1"})"));
  WorkflowRecord done = After(Answer(Plan(&reserved), 200, R"({"case": 7})"));
  const storage::WorkflowState state = StateOf(done);
  ASSERT_EQ(state.steps_size(), 3);
  EXPECT_TRUE(state.rows());
  EXPECT_TRUE(state.steps(0).answer_kept());
  EXPECT_EQ(state.steps(0).response(), R"({"id": "R1"})");
  EXPECT_FALSE(state.steps(2).answer_kept());
  EXPECT_EQ(state.steps(2).response(), "");
  EXPECT_EQ(state.steps(2).status(), storage::STEP_STATUS_DONE);
}

TEST_F(WorkflowPlanRowsTest, ARevertReadsTheKeptAnswerBackFromTheRows) {
  WorkflowRecord record =
      CancelledBefore(Answer(Plan(), 200, R"({"id": "R1"})"));
  EXPECT_EQ(StateOf(record).steps(0).request(), "");  // not stored
  WorkflowAction a = Plan(&record);
  ExpectRevertOf(a, 0);
  EXPECT_EQ(a.url, "http://127.0.0.1:1/release/R1");
}

TEST_F(WorkflowPlanRowsTest, AResendInDoubtSendsTheRederivedRequest) {
  event_.payload =
      R"({"reserve": {"sku": "A"}, "wrap": {"gift": false}, "fraud": {"n": 9}})";
  WorkflowRecord cancelled = ReservedThenCancelled();
  ASSERT_EQ(StateOf(cancelled).steps(2).request(), "");  // not stored
  WorkflowAction a = Plan(&cancelled);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_TRUE(a.resend);
  EXPECT_EQ(a.request_id, workflow::StepRequestId(event_.id, "fraud", false));
  EXPECT_EQ(a.body, R"({"n":9})");  // as it went out first
}

TEST_F(WorkflowPlanRowsTest, AStateStoredWholeIsConvertedByItsNextSettlement) {
  workflow::TEST_SetWriteRows(false);
  WorkflowRecord whole = After(Answer(Plan(), 200, R"({"id": "R1"})"));
  ASSERT_FALSE(StateOf(whole).rows());
  ASSERT_EQ(StateOf(whole).steps(0).request(), R"({"sku":"A"})");
  workflow::TEST_SetWriteRows(true);
  WorkflowAction a = Plan(&whole);
  ASSERT_EQ(a.kind, WorkflowAction::Kind::kSend);
  EXPECT_EQ(a.step, 2u);  // fraud: marked with reserve's result
  const Settlement s = Answer(a, 200, R"({"case": 7})");
  storage::WorkflowState written;
  ASSERT_TRUE(written.ParseFromString(s.workflow_state));
  EXPECT_TRUE(written.rows());
  EXPECT_TRUE(written.steps(0).answer_kept());  // its revert reads it
  EXPECT_EQ(written.steps(0).response(), R"({"id": "R1"})");
  EXPECT_EQ(written.steps(0).request(), "");
}

}  // namespace
}  // namespace outbox
