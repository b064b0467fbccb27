// Copyright (c) edge-outbox authors.
//
// A workflow as outboxctl reads it: what the store keeps of the workflow of
// one event (state, cancel, result rows), decoded. The agent's engine
// (agent/workflow/) writes it; outboxctl only shows it, resumes it
// (retry-step) or cancels it.

#ifndef OUTBOX_TOOLS_CTL_WORKFLOW_VIEW_H_
#define OUTBOX_TOOLS_CTL_WORKFLOW_VIEW_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "outbox/store.h"
#include "proto/storage.pb.h"

namespace outbox::ctl {

// Plain data.
struct WorkflowView {
  WorkflowRecord record;  // the cancel, and the state as stored
  // False while no step has finished (nothing but a cancel is stored).
  bool started = false;
  storage::WorkflowState state;  // decoded record.state
  // The attempt history, in the order the agent wrote it.
  std::vector<storage::StepResult> results;
  bool results_truncated = false;  // more rows exist than were read
};

// Reads the workflow of `event_id` with its first `max_results` result rows.
// nullopt when the store has none stored for it (not a workflow, or no step
// has finished and no cancel was committed).
// Errors: kDataLoss naming the event when a stored value does not decode;
// as Store::GetWorkflow and Store::ListWorkflowResults.
absl::StatusOr<std::optional<WorkflowView>> LoadWorkflow(
    Store* store, absl::string_view event_id, size_t max_results);

// "forward", "compensating", "completed", "compensated", "needs_attention";
// "not_started" for a workflow that has no state yet.
std::string PhaseName(const WorkflowView& workflow);

// "done", "skipped", "failed", "reverted", "no_revert", "revert_failed";
// "not_finished" for a step that was reached but has no outcome yet.
std::string StepStatusName(storage::StepStatus status);

// A stored Unix time in milliseconds; InfinitePast for 0 (not set).
absl::Time StoredTime(int64_t unix_ms);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_WORKFLOW_VIEW_H_
