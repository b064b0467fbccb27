// Copyright (c) edge-outbox authors.
//
// Workflows end to end against the real outbox-sink playing seed 003's
// services (inventory, fraud check, shipping, billing; --routes): the
// order workflow's configuration, orders committed with it, and what the
// sink received. Shared by the workflow suites in tests/agent/.

#ifndef OUTBOX_TESTS_TESTING_WORKFLOW_SINK_H_
#define OUTBOX_TESTS_TESTING_WORKFLOW_SINK_H_

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/storage.pb.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/status.h"
#include "tests/testing/workflow_state.h"

namespace outbox::testing {

// The sink's routes: seed 003's services. "simulate" in the request picks a
// failure: "decline" (billing 422, for good), "ship-down" (shipping 503,
// retried). inventory echoes "rid" as its reservation id when given.
// The four requests of an order that goes through (domestic, low risk).
inline const std::vector<std::string> kHappyPath = {
    "POST /api/inventory/reserve", "POST /api/fraud/check",
    "POST /api/domestic-shipping", "POST /api/billing"};
// Its compensation once billing failed: shipping, then inventory.
inline const std::vector<std::string> kReverts = {
    "POST /api/domestic-shipping/SHIP-1/cancel",
    "DELETE /api/inventory/RES-1/release"};

inline std::vector<std::string> Concat(std::vector<std::string> a,
                                       const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline constexpr char kRoutes[] = R"({"routes": [
  {"route": "POST /api/inventory/reserve",
   "body": {"reservationId": "RES-{counter}"}},
  {"route": "POST /api/inventory/echo",
   "body": {"reservationId": "{request:/rid}"}},
  {"route": "DELETE /api/inventory/{id}/release",
   "body": {"released": "{path:id}"}},
  {"route": "POST /api/fraud/check",
   "body": {"riskScore": "{request:/riskScore}"}},
  {"route": "POST /api/domestic-shipping",
   "body": {"shipmentId": "SHIP-{counter}"},
   "fail": {"when": "/simulate", "in": ["ship-down"], "status": 503}},
  {"route": "POST /api/domestic-shipping/{id}/cancel",
   "body": {"cancelled": "{path:id}"}},
  {"route": "POST /api/international-shipping",
   "body": {"shipmentId": "INTL-{counter}"}},
  {"route": "POST /api/billing", "body": {"chargeId": "CH-{counter}"},
   "fail": {"when": "/simulate", "in": ["decline"], "status": 422}},
  {"route": "POST /api/high-value-processing",
   "body": {"chargeId": "HV-{counter}"}},
  {"route": "POST /api/catchall", "body": {}}
]})";

struct Call {
  std::string method;
  std::string path;
  std::string id;
  std::string body;
  int status = 0;
};

class WorkflowSinkTest : public AgentSinkTest {
 protected:
  void SetUp() override {
    AgentSinkTest::SetUp();
    routes_path_ = dir_.Sub("routes.json");
    std::ofstream(routes_path_) << kRoutes;
    StartSink({"--routes", routes_path_});
  }

  std::string Destination(const std::string& name,
                          const std::string& path) const {
    return absl::StrCat("destinations { name: \"", name,
                        "\" url: \"http://127.0.0.1:", port_, path,
                        "\" secrets_file: \"", secret_path_, "\" }\n");
  }

  // The seed's six services as destinations (inventory at `reserve_path`)
  // and a short retry schedule.
  std::string ServiceDestinations(
      const std::string& reserve_path = "/api/inventory/reserve") const {
    return absl::StrCat(
        Destination("inventory", reserve_path),
        Destination("fraud", "/api/fraud/check"),
        Destination("domestic", "/api/domestic-shipping"),
        Destination("international", "/api/international-shipping"),
        Destination("billing", "/api/billing"),
        Destination("high_value", "/api/high-value-processing"),
        R"(retry { base_delay: "20ms" max_delay: "50ms" max_attempts: 3 })",
        "\n");
  }

  // The seed's order workflow; `reserve_path` and `reserve_revert` replace
  // the inventory step's for the template tests.
  std::string WorkflowConfig(
      const std::string& reserve_path = "/api/inventory/reserve",
      const std::string& reserve_revert =
          "/api/inventory/{{response:reserve:/reservationId}}/release") {
    const std::string base = absl::StrCat("http://127.0.0.1:", port_);
    return absl::StrCat(
        ServiceDestinations(reserve_path), R"(
        agent { probe_interval_min: "100ms" probe_interval_max: "1s"
                metrics_file: ")",
        MetricsPath(), R"(" }
        workflows {
          event_type: "order.created"
          steps {
            name: "reserve" destination: "inventory"
            revert { url: ")",
        base, reserve_revert, R"(" method: "DELETE" }
          }
          steps { name: "fraud" destination: "fraud" }
          steps {
            name: "shipping"
            choose {
              destination: "domestic"
              when { value: "request:/shippingType" op: "eq"
                     expected: "\"domestic\"" }
              revert { url: ")",
        base,
        R"(/api/domestic-shipping/{{response:shipping:/shipmentId}}/cancel" }
            }
            choose { destination: "international" }
          }
          steps {
            name: "billing"
            choose {
              destination: "billing"
              when { value: "response:fraud:/riskScore" op: "lt" expected: "50" }
            }
            choose { destination: "high_value" }
          }
        }
      )");
  }

  // Opens the store at dir_ again, after the test closed or edited it.
  void ReopenStore() {
    Options options;
    options.tables = {"sales"};
    absl::StatusOr<std::unique_ptr<Store>> reopened =
        Store::Open(options, dir_.Sub("db"));
    ASSERT_OUTBOX_OK(reopened);
    store_ = *std::move(reopened);
  }

  std::string MetricsPath() const { return dir_.Sub("outbox.prom"); }

  // outbox_workflows_finished_total{end="<end>"} in the metrics file, which
  // every Drain rewrites; -1 if it is not there.
  double WorkflowsFinished(const std::string& end) const {
    const std::string sample =
        absl::StrCat("outbox_workflows_finished_total{end=\"", end, "\"} ");
    std::ifstream in(MetricsPath());
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(sample, 0) != 0) continue;
      double value = -1;
      EXPECT_TRUE(absl::SimpleAtod(line.substr(sample.size()), &value)) << line;
      return value;
    }
    return -1;
  }

  std::string CommitOrder(const std::string& payload,
                          const std::string& key = "sale-1") {
    Txn txn;
    Event e;
    e.type = "order.created";
    e.ordering_key = key;
    e.content_type = "application/json";
    e.payload = payload;
    const std::string id = txn.Emit(e);
    txn.Put("sales", key, "open");
    EXPECT_TRUE(store_->Commit(txn).ok());
    return id;
  }

  // Commits one event of `type` with payload "{}" and no ordering key.
  void CommitPlainEvent(const std::string& type) {
    Txn txn;
    Event e;
    e.type = type;
    e.payload = "{}";
    txn.Emit(e);
    ASSERT_OUTBOX_OK(store_->Commit(txn));
  }

  void CancelOrder(const std::string& id) {
    Txn txn;
    txn.Put("sales", "sale-1", "cancelled");
    txn.Cancel(id, "customer cancelled");
    ASSERT_OUTBOX_OK(store_->Commit(txn));
  }

  // A new agent with `config`, drained until nothing is pending.
  void RunToEnd(const std::string& config) {
    std::unique_ptr<Agent> agent = MakeAgent(config);
    ASSERT_NE(agent, nullptr);
    DrainAll(agent.get());
  }

  // Commits an order whose shipping answers 503 (retried) and runs `agent`
  // until shipping has failed at least once and nothing is in flight (a
  // retry may have left before the sink logged the first: on a slow board
  // it would then be logged after whatever the caller does next). Returns
  // the order's id.
  std::string OrderStuckAtShipping(Agent* agent) {
    const std::string id = CommitOrder(
        R"({"riskScore": 10, "shippingType": "domestic", "simulate": "ship-down"})");
    for (int i = 0; i < 200 && Calls().size() < 3; ++i) {
      EXPECT_TRUE(agent->RunOnce(absl::Now() + absl::Milliseconds(20)).ok());
    }
    EXPECT_GE(Calls().size(), 3u);
    EXPECT_TRUE(agent->Drain().ok());  // answers in; the retry waits
    for (size_t i = 2; i < Calls().size(); ++i) {
      EXPECT_THAT(Calls()[i].path, ::testing::HasSubstr("shipping"));
    }
    return id;
  }

  // Runs `agent` until nothing is pending in the store, then drains it
  // (which writes the metrics file). The 120 s bound only ends a hang: a
  // Drain() while events are pending never returns from an agent that
  // never goes idle.
  void DrainAll(Agent* agent) {
    const absl::Time guard = absl::Now() + absl::Seconds(120);
    while (absl::Now() < guard) {
      ASSERT_OUTBOX_OK(agent->RunOnce(absl::Now() + absl::Milliseconds(20)));
      absl::StatusOr<Stats> stats = store_->GetStats();
      ASSERT_OUTBOX_OK(stats);
      // Drain() returns at once then, with the metrics file written.
      if (stats->pending_events == 0) {
        ASSERT_OUTBOX_OK(agent->Drain());
        return;
      }
    }
    ADD_FAILURE() << "events still pending after 120 s";
  }

  std::vector<Call> Calls() const {
    std::vector<Call> calls;
    std::ifstream in(log_path_);
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json j = nlohmann::json::parse(line);
      Call c;
      c.method = j.value("method", "");
      c.path = j.value("path", "");
      c.id = j.value("id", "");
      c.body = j.value("body", "");
      c.status = j.value("status", 0);
      calls.push_back(c);
    }
    return calls;
  }

  std::vector<std::string> Paths() const {
    std::vector<std::string> paths;
    for (const Call& c : Calls()) paths.push_back(c.method + " " + c.path);
    return paths;
  }

  storage::WorkflowState State(const std::string& id) {
    return StoredWorkflowState(store_.get(), id);
  }

  std::string routes_path_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_WORKFLOW_SINK_H_
