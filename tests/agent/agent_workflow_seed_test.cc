// Copyright (c) edge-outbox authors.
//
// Seed 003's order configuration, written as the seed writes it: its step
// names (inventory, fraudCheck, shipping with a `choose` on $.shippingType,
// billing on fraudCheck's riskScore), named `extract` values read from the
// step's own answer and request, {shipmentId} inside a JSON string of the
// revert's payload, and revert URLs relative to the step's destination. Run
// end to end against the real outbox-sink playing the seed's services.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/storage.pb.h"
#include "tests/testing/workflow_sink.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using testing::Call;
using testing::kHappyPath;

class SeedOrderTest : public testing::WorkflowSinkTest {
 protected:
  // The seed's `outbox.http.fanout`, `routes` and `revert` blocks.
  std::string SeedConfig() {
    return absl::StrCat(ServiceDestinations(), R"(
        agent { probe_interval_min: "100ms" probe_interval_max: "1s" }
        workflows {
          event_type: "order.created"
          steps {
            name: "inventory" destination: "inventory"
            revert {
              url: "/api/inventory/{reservationId}/release"
              method: "DELETE"
              extract { name: "reservationId" value: "response:$.reservationId" }
            }
          }
          steps { name: "fraudCheck" destination: "fraud" }
          steps {
            name: "shipping"
            choose {
              destination: "domestic"
              when { value: "request:$.shippingType" op: "eq"
                     expected: "\"domestic\"" }
              revert {
                url: "/api/domestic-shipping/{shipmentId}/cancel"
                method: "POST"
                extract { name: "shipmentId" value: "response:$.shipmentId" }
                extract { name: "customerId" value: "request:$.customerId" }
                payload: "{\"reason\": \"payment_failed\", \"shipmentId\": \"{shipmentId}\", \"customerId\": \"{customerId}\"}"
              }
            }
            choose {
              destination: "international"
              when { value: "request:$.shippingType" op: "eq"
                     expected: "\"international\"" }
            }
          }
          steps {
            name: "billing"
            choose {
              destination: "billing"
              when { value: "response:fraudCheck:$.riskScore" op: "lt"
                     expected: "50" }
            }
            choose {
              destination: "high_value"
              when { value: "response:fraudCheck:$.riskScore" op: "gte"
                     expected: "50" }
            }
          }
        }
      )");
  }
};

TEST_F(SeedOrderTest, RunsThroughItsFourSteps) {
  const std::string id = CommitOrder(
      R"({"customerId": "C-123", "riskScore": 10, "shippingType": "domestic"})");
  RunToEnd(SeedConfig());
  EXPECT_THAT(Paths(), ::testing::ElementsAreArray(kHappyPath));
  EXPECT_EQ(State(id).phase(), storage::WORKFLOW_PHASE_COMPLETED);
}

TEST_F(SeedOrderTest, ADeclinedPaymentCancelsShippingThenReleasesInventory) {
  const std::string id = CommitOrder(
      R"({"customerId": "C-123", "riskScore": 10, "shippingType": "domestic",)"
      R"( "simulate": "decline"})");
  RunToEnd(SeedConfig());
  const std::vector<Call> calls = Calls();
  ASSERT_EQ(calls.size(), 6u) << ::testing::PrintToString(Paths());
  // The extracted ids, in the relative URLs at the steps' own origins.
  EXPECT_EQ(calls[4].method + " " + calls[4].path,
            "POST /api/domestic-shipping/SHIP-1/cancel");
  EXPECT_EQ(calls[5].method + " " + calls[5].path,
            "DELETE /api/inventory/RES-1/release");
  // {shipmentId} and {customerId} inside the payload's strings.
  EXPECT_EQ(nlohmann::json::parse(calls[4].body),
            nlohmann::json::parse(R"({"reason": "payment_failed",)"
                                  R"( "shipmentId": "SHIP-1",)"
                                  R"( "customerId": "C-123"})"));
  storage::WorkflowState state = State(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_EQ(state.steps(0).status(), storage::STEP_STATUS_REVERTED);
  EXPECT_EQ(state.steps(1).status(), storage::STEP_STATUS_NO_REVERT);
  EXPECT_EQ(state.steps(2).status(), storage::STEP_STATUS_REVERTED);
  EXPECT_EQ(state.steps(3).status(), storage::STEP_STATUS_FAILED);
}

// No shipping route matches "pickup": on_no_match defaults to "fail", so
// the order is not billed without shipping; the reservation is released.
TEST_F(SeedOrderTest, AShippingTypeNoRouteTakesFailsAndCompensates) {
  const std::string id = CommitOrder(
      R"({"customerId": "C-123", "riskScore": 10, "shippingType": "pickup"})");
  RunToEnd(SeedConfig());
  EXPECT_THAT(Paths(), ElementsAre("POST /api/inventory/reserve",
                                   "POST /api/fraud/check",
                                   "DELETE /api/inventory/RES-1/release"));
  storage::WorkflowState state = State(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_THAT(state.cause(), HasSubstr("step shipping failed: no `choose`"));
}

}  // namespace
}  // namespace outbox
