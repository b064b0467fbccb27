// Copyright (c) edge-outbox authors.

#include "tools/demo/saga_files.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace outbox::demo {
namespace {

// Seed 003's order as the seed writes it: named `extract` values, and
// revert paths at each step's own destination (docs/workflows.md).
std::string Workflow() {
  return absl::StrCat(
      "workflows {\n  event_type: \"sale.created\"\n  payloads: "
      "\"per_step\"\n",
      "  steps {\n    name: \"reserve\" destination: \"inventory\"\n",
      "    revert {\n      url: \"/api/inventory/{reservationId}/release\" "
      "method: \"DELETE\"\n",
      "      extract { name: \"reservationId\" value: "
      "\"response:$.reservationId\" }\n    }\n  }\n",
      "  steps { name: \"fraud\" destination: \"fraud\" }  # read-only\n",
      "  steps {\n    name: \"shipping\"\n",
      "    extract { name: \"shipmentId\" value: \"response:$.shipmentId\" "
      "}\n",
      "    choose {\n      destination: \"domestic\"\n      when { value: "
      "\"request:/shippingType\" op: \"eq\" expected: \"\\\"domestic\\\"\" }\n",
      "      revert { url: \"/api/domestic-shipping/{shipmentId}/cancel\" "
      "}\n    }\n",
      "    choose {\n      destination: \"international\"\n",
      "      revert { url: \"/api/international-shipping/{shipmentId}/cancel\" "
      "}\n    }\n  }\n",
      "  steps {\n    name: \"billing\"\n    choose {\n",
      "      destination: \"billing\"\n      when { value: "
      "\"response:fraud:/riskScore\" op: \"lt\" expected: \"50\" }\n    }\n",
      "    choose { destination: \"high_value\" }\n  }\n}\n");
}

}  // namespace

std::string SagaTillConfigText(const TillConfig& c) {
  return absl::StrCat(
      "# Written by outbox-demo: the saga till's agent. Seed 003's order as a\n"
      "# workflow against one outbox-sink playing its four services.\n",
      HttpDestinationText(c, "inventory", "/api/inventory/reserve"),
      HttpDestinationText(c, "fraud", "/api/fraud/check"),
      HttpDestinationText(c, "domestic", "/api/domestic-shipping"),
      HttpDestinationText(c, "international", "/api/international-shipping"),
      HttpDestinationText(c, "billing", "/api/billing"),
      HttpDestinationText(c, "high_value", "/api/high-value-processing"),
      "retry { base_delay: \"50ms\" max_delay: \"500ms\" }\n",
      "agent { probe_interval_min: \"100ms\" probe_interval_max: \"500ms\" "
      "}\n",
      Workflow());
}

}  // namespace outbox::demo
