// Copyright (c) edge-outbox authors.
//
// WorkflowModel's checks fire on the violations they name. The broken agent
// (AgentTestOptions::skip_workflow_sync) proves the soak catches a step sent
// before the result it follows was durable; these cover the other workflow
// checks, on a real store holding a workflow the test writes itself and a
// hand-written receiver log with the durability the test reports itself.

#include "tests/crash/soak_workflows.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/events.h"
#include "tests/testing/store_fixture.h"

namespace outbox::testing {
namespace {

constexpr uint64_t kSerial = 7;
constexpr char kPayload[] = R"({"txn":7,"n":0,"records":[]})";

using Names = std::vector<std::string>;

class SoakWorkflowsTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    id_ = CommitEvent(MakeEvent(kSoakWorkflowType, "", kPayload));
    model_.AddEvent(id_, kSerial, 0);
    model_.OnCommitted(id_);
  }

  // The receiver gets `step` (`revert`: its revert, undoing the answer
  // `ref`, sent under the revert id of `id_step`) and answers `answer`.
  void Receive(int step, bool revert, Answer answer, std::string ref = "",
               int id_step = -1) {
    ReceivedRequest r;
    r.arrival = log_.size();
    r.webhook_id = SoakStepRequestId(id_, id_step < 0 ? step : id_step, revert);
    const std::string url =
        absl::StrCat("http://receiver.test/wf/", kSoakWorkflow[step].name);
    r.url = revert ? absl::StrCat(url, "/", ref, "/undo") : url;
    r.body = revert ? absl::StrCat(R"({"txn": )", kSerial, R"(, "n": 0})")
                    : kPayload;
    r.answer = answer;
    if (answer == Answer::kOk) {
      r.response = absl::StrCat(R"({"ref":"a)", r.arrival, R"("})");
    }
    log_.push_back(r);
    const WorkflowModel::Request* request = model_.FindRequest(r.webhook_id);
    ASSERT_NE(request, nullptr);
    model_.OnReceipt(r, *request, acks_, &violations_);
  }

  // The agent's Settle of `step`'s (or its revert's) 2xx result returned,
  // and a synced write covered it.
  void Durable(int step, bool revert = false) {
    acks_.OnResultReturned(SoakStepRequestId(id_, step, revert));
    acks_.OnSyncedWrite(log_.size());
  }

  // Stores `state` for the event as the agent settles it: kStepDone keeps
  // it pending, kDelivered takes it out of the queue.
  void StoreState(const storage::WorkflowState& state,
                  Settlement::Kind kind = Settlement::Kind::kStepDone) {
    Settlement s;
    s.kind = kind;
    s.event = DueWithId(id_);
    s.workflow_state = state.SerializeAsString();
    ASSERT_OUTBOX_OK(store_->Settle({s}));
  }

  void CheckStored() {
    model_.CheckStored(
        store_.get(),
        [this](const std::string& id) {
          if (store_->FindPending(id).ok()) {
            return WorkflowModel::Where::kPending;
          }
          return store_->FindDeadLetter(id).ok() ? WorkflowModel::Where::kDead
                                                 : WorkflowModel::Where::kGone;
        },
        log_.size(), SIZE_MAX, &acks_, &violations_);
  }

  // A state with steps 0..n-1 done, their answers those of `arrivals`.
  storage::WorkflowState Done(
      const std::vector<size_t>& arrivals,
      storage::WorkflowPhase phase = storage::WORKFLOW_PHASE_FORWARD) {
    storage::WorkflowState state;
    state.set_phase(phase);
    for (size_t k = 0; k < arrivals.size(); ++k) {
      storage::WorkflowStepState* s = state.add_steps();
      s->set_name(kSoakWorkflow[k].name);
      s->set_status(storage::STEP_STATUS_DONE);
      s->set_response(log_[arrivals[k]].response);
    }
    state.set_next_step(static_cast<uint32_t>(arrivals.size()));
    return state;
  }

  Names Fired() const {
    Names names;
    for (const Violation& v : violations_) {
      names.push_back(ViolationKindName(v.kind));
    }
    return names;
  }
  std::string Details() const {
    std::string s;
    for (const Violation& v : violations_) {
      absl::StrAppend(&s, "\n  [", ViolationKindName(v.kind), "] ", v.detail);
    }
    return s;
  }

  std::string id_;
  WorkflowModel model_;
  AckLedger acks_;
  std::vector<ReceivedRequest> log_;
  std::vector<Violation> violations_;
};

TEST_F(SoakWorkflowsTest, CompletedInOrderWithDurableResultsIsClean) {
  for (int step = 0; step < kSoakSteps; ++step) {
    Receive(step, false, step == 1 ? Answer::kServerError : Answer::kOk);
    if (step == 1) Receive(step, false, Answer::kOk);  // a retry, same id
    Durable(step);
  }
  StoreState(Done({0, 2, 3}, storage::WORKFLOW_PHASE_COMPLETED),
             Settlement::Kind::kDelivered);
  CheckStored();
  EXPECT_EQ(Fired(), Names{}) << Details();
  EXPECT_TRUE(model_.LeftAsDelivered(id_));
  EXPECT_EQ(model_.counts().completed, 1u);
}

TEST_F(SoakWorkflowsTest, StepBeforeThePreviousResultIsDurableIsNotDurable) {
  Receive(0, false, Answer::kOk);
  acks_.OnResultReturned(SoakStepRequestId(id_, 0, false));  // no sync
  Receive(1, false, Answer::kOk);
  EXPECT_EQ(Fired(), Names{"step_not_durable"}) << Details();
}

TEST_F(SoakWorkflowsTest, StepAfterARevertIsForwardAfterCompensation) {
  Receive(0, false, Answer::kOk);
  Durable(0);
  Receive(1, false, Answer::kBadRequest);
  Receive(0, true, Answer::kOk, "a0");
  Receive(1, false, Answer::kOk);
  EXPECT_EQ(Fired(), Names{"forward_after_compensation"}) << Details();
}

TEST_F(SoakWorkflowsTest, RevertsFirstStepFirstIsRevertOrder) {
  Receive(0, false, Answer::kOk);
  Durable(0);
  Receive(1, false, Answer::kOk);
  Durable(1);
  Receive(0, true, Answer::kOk, "a0");
  Durable(0, true);
  Receive(1, true, Answer::kOk, "a1");
  EXPECT_EQ(Fired(), Names{"revert_order"}) << Details();
}

TEST_F(SoakWorkflowsTest, RevertBeforeTheLaterRevertIsDurableIsNotDurable) {
  Receive(0, false, Answer::kOk);
  Durable(0);
  Receive(1, false, Answer::kOk);
  Durable(1);
  Receive(1, true, Answer::kOk, "a1");  // its result never durable
  Receive(0, true, Answer::kOk, "a0");
  EXPECT_EQ(Fired(), Names{"step_not_durable"}) << Details();
}

TEST_F(SoakWorkflowsTest, RevertResentAfterItsResultWasDurableIsRepeated) {
  Receive(0, false, Answer::kOk);
  Durable(0);
  Receive(0, true, Answer::kLostAnswer, "a0");
  Receive(0, true, Answer::kOk, "a0");  // a resend before: allowed
  Durable(0, true);
  Receive(0, true, Answer::kOk, "a0");
  EXPECT_EQ(Fired(), Names{"revert_repeated"}) << Details();
}

TEST_F(SoakWorkflowsTest, RevertUnderAnotherRevertsIdIsRevertRepeated) {
  Receive(0, false, Answer::kOk);
  Durable(0);
  Receive(1, false, Answer::kOk);
  Durable(1);
  Receive(1, true, Answer::kOk, "a1", /*id_step=*/0);
  EXPECT_EQ(Fired(), Names{"revert_repeated"}) << Details();
}

TEST_F(SoakWorkflowsTest, RevertOfAnAnswerNeverGivenIsWorkflowStateWrong) {
  Receive(0, false, Answer::kOk);
  Durable(0);
  Receive(0, true, Answer::kOk, "a9");
  EXPECT_EQ(Fired(), Names{"workflow_state_wrong"}) << Details();
}

TEST_F(SoakWorkflowsTest, StepResentAfterItsResultWasDurableIsStepResent) {
  Receive(0, false, Answer::kOk);
  Receive(0, false, Answer::kOk);  // its result not durable yet: allowed
  Durable(0);
  Receive(0, false, Answer::kOk);
  EXPECT_EQ(Fired(), Names{"step_resent"}) << Details();
}

TEST_F(SoakWorkflowsTest, ResultAReopenShowsIsDurableFromThen) {
  Receive(0, false, Answer::kOk);
  acks_.OnResultReturned(SoakStepRequestId(id_, 0, false));  // no sync
  StoreState(Done({0}));
  CheckStored();  // the reopen shows it: durable after all
  EXPECT_EQ(Fired(), Names{}) << Details();
  Receive(1, false, Answer::kOk);
  EXPECT_EQ(Fired(), Names{}) << Details();
  Receive(0, false, Answer::kOk);
  EXPECT_EQ(Fired(), Names{"step_resent"}) << Details();
}

TEST_F(SoakWorkflowsTest, DurableResultMissingAfterAReopenIsResultLost) {
  Receive(0, false, Answer::kOk);
  Durable(0);
  CheckStored();  // nothing stored for the workflow
  EXPECT_EQ(Fired(), Names{"result_lost"}) << Details();
}

TEST_F(SoakWorkflowsTest, StoredAnswerNeverGivenIsWorkflowStateWrong) {
  Receive(0, false, Answer::kServerError);
  Receive(0, false, Answer::kOk);
  storage::WorkflowState state = Done({1});
  state.mutable_steps(0)->set_response(R"({"ref":"a0"})");  // the 503's
  StoreState(state);
  CheckStored();
  EXPECT_EQ(Fired(), Names{"workflow_state_wrong"}) << Details();
}

TEST_F(SoakWorkflowsTest, CompensatedWithAStepLeftDoneIsWorkflowStateWrong) {
  Receive(0, false, Answer::kOk);
  Durable(0);
  Receive(1, false, Answer::kBadRequest);
  storage::WorkflowState state = Done({0}, storage::WORKFLOW_PHASE_COMPENSATED);
  state.add_steps()->set_status(storage::STEP_STATUS_FAILED);
  StoreState(state, Settlement::Kind::kDeadLetterUnsent);
  CheckStored();
  // Step 0, processed, is also not reverted.
  EXPECT_EQ(Fired(), (Names{"workflow_state_wrong", "done_not_reverted"}))
      << Details();
}

// Step 1's answer was lost (the receiver acted on it), and compensation
// reverted only step 0: as if step 1 had never happened.
TEST_F(SoakWorkflowsTest, CompensatedWithAProcessedStepNotRevertedIsCaught) {
  Receive(0, false, Answer::kOk);
  Durable(0);
  Receive(1, false, Answer::kLostAnswer);
  Receive(0, true, Answer::kOk, "a0");
  storage::WorkflowState state = Done({0}, storage::WORKFLOW_PHASE_COMPENSATED);
  state.mutable_steps(0)->set_status(storage::STEP_STATUS_REVERTED);
  state.set_cancelled(true);
  StoreState(state, Settlement::Kind::kDelivered);
  CheckStored();
  EXPECT_EQ(Fired(), Names{"done_not_reverted"}) << Details();
}

TEST_F(SoakWorkflowsTest, FinishedWorkflowStillPendingIsWorkflowStateWrong) {
  Receive(0, false, Answer::kOk);
  Durable(0);
  Receive(1, false, Answer::kBadRequest);
  storage::WorkflowState state =
      Done({0}, storage::WORKFLOW_PHASE_NEEDS_ATTENTION);
  state.mutable_steps(0)->set_status(storage::STEP_STATUS_REVERT_FAILED);
  Receive(0, true, Answer::kBadRequest, "a0");
  StoreState(state);  // kStepDone: left pending
  CheckStored();
  EXPECT_EQ(Fired(), Names{"workflow_state_wrong"}) << Details();
}

}  // namespace
}  // namespace outbox::testing
