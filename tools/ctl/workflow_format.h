// Copyright (c) edge-outbox authors.
//
// How `outboxctl show` prints a workflow's timeline: its phase, why
// compensation began, the cancel, each step reached, then every attempt
// (the result rows) in the order the agent made them. Request and response
// bodies may hold customer data, so they are printed only when asked
// (`with_bodies`); otherwise only their sizes.

#ifndef OUTBOX_TOOLS_CTL_WORKFLOW_FORMAT_H_
#define OUTBOX_TOOLS_CTL_WORKFLOW_FORMAT_H_

#include <string>

#include "nlohmann/json.hpp"
#include "tools/ctl/workflow_view.h"

namespace outbox::ctl {

// A block for the end of `show`'s text, starting "workflow:".
std::string WorkflowDetail(const WorkflowView& workflow, bool with_bodies);

// The object `show --json` puts under "workflow": "phase", "cause",
// "cancelled" ..., "steps": [...], "results": [...]. Byte fields as in
// event_format.h (SetBytes); times as RFC 3339 plus *_unix_ms.
nlohmann::ordered_json WorkflowJson(const WorkflowView& workflow,
                                    bool with_bodies);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_WORKFLOW_FORMAT_H_
