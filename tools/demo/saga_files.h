// Copyright (c) edge-outbox authors.
//
// The saga till's agent configuration: seed 003's four steps against one
// outbox-sink playing its four services (tools/sink/testdata/
// seed003_routes.json).

#ifndef OUTBOX_TOOLS_DEMO_SAGA_FILES_H_
#define OUTBOX_TOOLS_DEMO_SAGA_FILES_H_

#include <string>

#include "tools/demo/demo_files.h"

namespace outbox::demo {

// The configuration (protobuf text format) mapping "sale.created" to the
// workflow reserve (revert: release the reservationId it answered), fraud
// (no revert), shipping by the payload's shippingType (revert: cancel the
// shipmentId it answered) and billing by the fraud check's riskScore
// (< 50 standard, >= 50 high-value); per-step payloads. Short retry delays.
std::string SagaTillConfigText(const TillConfig& config);

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_SAGA_FILES_H_
