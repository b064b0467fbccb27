// Copyright (c) edge-outbox authors.
//
// A workflow's rows (feature workflow_rows, keys.h) and the WorkflowState
// they stand for: the store writes a state the agent settles as the rows
// that changed, and assembles the rows into one state for every reader
// (Store::GetWorkflow, outboxctl). Pure functions: thread-compatible.

#ifndef OUTBOX_LIB_WORKFLOW_ROWS_H_
#define OUTBOX_LIB_WORKFLOW_ROWS_H_

#include <map>
#include <string>
#include <vector>

#include "proto/storage.pb.h"

namespace outbox::workflow_rows {

// `state` without its steps.
storage::WorkflowHead HeadOf(const storage::WorkflowState& state);
// A step's row: `step` without its request and answer.
storage::WorkflowStep StepOf(const storage::WorkflowStepState& step);

// The state `head`, `steps` (in index order) and `answers` (by step index)
// stand for, marked `rows`: no step has a request, and only those whose
// answer was kept have a response.
storage::WorkflowState Assemble(
    const storage::WorkflowHead& head,
    const std::vector<storage::WorkflowStep>& steps,
    const std::map<uint32_t, storage::StepAnswer>& answers);

}  // namespace outbox::workflow_rows

#endif  // OUTBOX_LIB_WORKFLOW_ROWS_H_
