// Copyright (c) edge-outbox authors.

#include "tools/ctl/workflow_view.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace outbox::ctl {
namespace {

// The enum value's own name without its prefix, lower case: the names
// outboxctl prints follow the schema's.
// A value this build does not know (a newer agent's) shows as its number.
std::string EnumName(const std::string& full, absl::string_view prefix,
                     int value) {
  if (full.empty()) return absl::StrCat("unknown_", value);
  absl::string_view name = full;
  absl::ConsumePrefix(&name, prefix);
  return absl::AsciiStrToLower(name);
}

absl::Status Undecodable(absl::string_view what, absl::string_view event_id) {
  return absl::DataLossError(absl::StrCat("the stored ", what, " of workflow ",
                                          event_id, " does not decode"));
}

}  // namespace

absl::StatusOr<std::optional<WorkflowView>> LoadWorkflow(
    Store* store, absl::string_view event_id, size_t max_results) {
  absl::StatusOr<WorkflowRecord> record = store->GetWorkflow(event_id);
  if (absl::IsNotFound(record.status())) return std::nullopt;
  if (!record.ok()) return record.status();
  WorkflowView view;
  view.record = *std::move(record);
  view.started = !view.record.state.empty();
  if (view.started && !view.state.ParseFromString(view.record.state)) {
    return Undecodable("state", event_id);
  }
  if (max_results == 0) return view;
  // One row more than shown says whether the history was cut short.
  OUTBOX_ASSIGN_OR_RETURN(
      std::vector<std::string> rows,
      store->ListWorkflowResults(event_id, max_results + 1));
  view.results_truncated = rows.size() > max_results;
  if (view.results_truncated) rows.resize(max_results);
  for (const std::string& raw : rows) {
    if (!view.results.emplace_back().ParseFromString(raw)) {
      return Undecodable("result row", event_id);
    }
  }
  return view;
}

std::string PhaseName(const WorkflowView& workflow) {
  if (!workflow.started ||
      workflow.state.phase() == storage::WORKFLOW_PHASE_UNSPECIFIED) {
    return "not_started";
  }
  return EnumName(storage::WorkflowPhase_Name(workflow.state.phase()),
                  "WORKFLOW_PHASE_", workflow.state.phase());
}

std::string StepStatusName(storage::StepStatus status) {
  if (status == storage::STEP_STATUS_UNSPECIFIED) return "not_finished";
  return EnumName(storage::StepStatus_Name(status), "STEP_STATUS_", status);
}

absl::Time StoredTime(int64_t unix_ms) {
  return unix_ms == 0 ? absl::InfinitePast() : absl::FromUnixMillis(unix_ms);
}

}  // namespace outbox::ctl
