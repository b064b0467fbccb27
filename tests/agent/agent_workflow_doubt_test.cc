// Copyright (c) edge-outbox authors.
//
// A workflow step in doubt at a cancel, end to end: its receiver (a real
// outbox-sink) acted on it but the answer was lost, and the cancel lands
// while its retry waits. Compensation must resend it under its own id,
// learn that it happened, and revert it before the steps before it.

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/expr/step_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/storage.pb.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;

// The inventory, and the reverts of both steps, on the fixture's sink (ship's
// revert names that other origin: other_origin: true).
constexpr char kInventoryRoutes[] = R"({"routes": [
  {"route": "POST /api/inventory/reserve",
   "body": {"reservationId": "RES-{counter}"}},
  {"route": "DELETE /api/inventory/{id}/release",
   "body": {"released": "{path:id}"}},
  {"route": "POST /api/shipping/{id}/cancel",
   "body": {"cancelled": "{path:id}"}}
]})";
// Shipping, on a sink of its own whose answers can be lost.
constexpr char kShippingRoutes[] = R"({"routes": [
  {"route": "POST /api/shipping", "body": {"shipmentId": "SHIP-{counter}"}}
]})";

class AgentWorkflowDoubtTest : public testing::AgentSinkTest {
 protected:
  void SetUp() override {
    testing::AgentSinkTest::SetUp();
    const std::string inventory = dir_.Sub("inventory.json");
    std::ofstream(inventory) << kInventoryRoutes;
    StartSink({"--routes", inventory});
    ship_routes_ = dir_.Sub("shipping.json");
    std::ofstream(ship_routes_) << kShippingRoutes;
    ship_log_ = dir_.Sub("shipping.log");
  }
  void TearDown() override {
    if (ship_ != nullptr) {
      EXPECT_OUTBOX_OK(sink::StopCleanly(ship_.get()));
    }
    testing::AgentSinkTest::TearDown();
  }

  // The shipping sink, on `port` (0: a free one); `lose` drops every answer
  // (it acts on the request, then closes the connection).
  void StartShipping(bool lose, int port = 0) {
    std::vector<std::string> args = {"--secret-file", secret_path_,
                                     "--log",         ship_log_,
                                     "--routes",      ship_routes_};
    if (lose) args.insert(args.end(), {"--drop-rate", "1"});
    auto sink = sink::SinkProcess::Start(
        testing::TargetCommand(OUTBOX_SINK_BINARY, args), dir_.path(),
        absl::Seconds(10), port);
    ASSERT_OUTBOX_OK(sink);
    ship_ = std::move(*sink);
  }
  void StopShipping() {
    ASSERT_OUTBOX_OK(sink::StopCleanly(ship_.get()));
    ship_.reset();
  }

  std::string WorkflowConfig() const {
    const std::string a = absl::StrCat("http://127.0.0.1:", port_);
    const std::string b = absl::StrCat("http://127.0.0.1:", ship_->port());
    return absl::StrCat(
        "destinations { name: \"inventory\" url: \"", a,
        "/api/inventory/reserve\" secrets_file: \"", secret_path_, "\" }\n",
        "destinations { name: \"shipping\" url: \"", b,
        "/api/shipping\" secrets_file: \"", secret_path_, "\" }\n", R"(
        retry { base_delay: "1s" max_delay: "1s" max_attempts: 5 }
        agent { probe_interval_min: "100ms" probe_interval_max: "1s" }
        workflows {
          event_type: "order.created"
          steps { name: "reserve" destination: "inventory"
            revert { url: ")",
        a, R"(/api/inventory/{{response:reserve:/reservationId}}/release"
                     method: "DELETE" } }
          steps { name: "ship" destination: "shipping"
            revert { url: ")",
        a, R"(/api/shipping/{{response:ship:/shipmentId}}/cancel"
                     other_origin: true } }
        })");
  }

  std::string CommitOrder() {
    Txn txn;
    Event e;
    e.type = "order.created";
    e.ordering_key = "sale-1";
    e.content_type = "application/json";
    e.payload = R"({"sku": "A"})";
    const std::string id = txn.Emit(e);
    txn.Put("sales", "sale-1", "open");
    EXPECT_OUTBOX_OK(store_->Commit(txn));
    return id;
  }

  // The result rows stored for `id`.
  size_t Rows(const std::string& id) {
    absl::StatusOr<std::vector<std::string>> rows =
        store_->ListWorkflowResults(id, 100);
    EXPECT_OUTBOX_OK(rows);
    return rows.ok() ? rows->size() : 0;
  }

  std::vector<std::string> InventoryPaths() const {
    std::vector<std::string> paths;
    for (const testing::SinkLine& l : SinkLog()) paths.push_back(l.path);
    return paths;
  }

  std::unique_ptr<sink::SinkProcess> ship_;
  std::string ship_routes_;
  std::string ship_log_;
};

TEST_F(AgentWorkflowDoubtTest,
       AStepWhoseAnswerWasLostAtACancelIsResentThenReverted) {
  ASSERT_NO_FATAL_FAILURE(StartShipping(/*lose=*/true));
  const std::string id = CommitOrder();
  std::unique_ptr<Agent> agent = MakeAgent(WorkflowConfig());
  ASSERT_NE(agent, nullptr);
  // Until ship's lost answer is recorded as an attempt (its retry waits
  // 1 s, and only these rounds move the agent).
  for (int i = 0; i < 200 && Rows(id) < 2; ++i) {
    ASSERT_OUTBOX_OK(agent->RunOnce(absl::Now() + absl::Milliseconds(20)));
  }
  ASSERT_EQ(Rows(id), 2u);  // reserve's 2xx, ship's retry
  Txn cancel;
  cancel.Put("sales", "sale-1", "cancelled");
  cancel.Cancel(id, "customer cancelled");
  ASSERT_OUTBOX_OK(store_->Commit(cancel));
  // Shipping answers again (same port, so the same destination).
  const int port = ship_->port();
  ASSERT_NO_FATAL_FAILURE(StopShipping());
  ASSERT_NO_FATAL_FAILURE(StartShipping(/*lose=*/false, port));
  for (int i = 0; i < 200; ++i) {
    absl::StatusOr<uint64_t> pending = agent->Drain();
    ASSERT_OUTBOX_OK(pending);
    if (*pending == 0) break;
    absl::SleepFor(absl::Milliseconds(20));
  }

  // Ship went out twice, under its one id: the lost answer, then the resend.
  const std::string ship_id = workflow::StepRequestId(id, "ship", false);
  std::vector<std::string> ship_ids, ship_actions;
  for (const std::string& line : sink::ReadLines(ship_log_)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    ship_ids.push_back(j.value("id", ""));
    ship_actions.push_back(j.value("action", ""));
  }
  EXPECT_THAT(ship_ids, ElementsAre(ship_id, ship_id));
  EXPECT_THAT(ship_actions, ElementsAre("drop", "answer"));
  // Then ship reverted with the resend's answer, then reserve.
  EXPECT_THAT(InventoryPaths(), ElementsAre("/api/inventory/reserve",
                                            "/api/shipping/SHIP-1/cancel",
                                            "/api/inventory/RES-1/release"));
  absl::StatusOr<WorkflowRecord> record = store_->GetWorkflow(id);
  ASSERT_OUTBOX_OK(record);
  storage::WorkflowState state;
  ASSERT_TRUE(state.ParseFromString(record->state));
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_EQ(state.steps(1).status(), storage::STEP_STATUS_REVERTED);
  EXPECT_EQ(state.steps(0).status(), storage::STEP_STATUS_REVERTED);
}

}  // namespace
}  // namespace outbox
