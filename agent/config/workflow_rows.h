// Copyright (c) edge-outbox authors.
//
// Whether the workflow engine writes workflows as rows (a head, a row per
// step, the answers references read: feature workflow_rows, lib/keys.h) or
// as one state under "s", rewritten whole by every settlement.
//
// Rolled out in two releases (docs/firmware-updates.md), so that a rollback
// by one release always works: this release reads both and writes "s"
// states unless the configuration asks for rows (`agent { workflow_storage:
// "rows" }`, for devices that will not go back to a build before
// workflow_rows); the next one flips kWriteWorkflowRows, the default. A
// store a rows writer touched is refused by builds that do not know
// workflow_rows.
//
// A workflow already stored as rows stays rows whatever this says (its
// requests are not stored: an "s" state written from it would lack them).

#ifndef OUTBOX_AGENT_CONFIG_WORKFLOW_ROWS_H_
#define OUTBOX_AGENT_CONFIG_WORKFLOW_ROWS_H_

#include <optional>

namespace outbox::workflow {

// The default of `workflow_storage`. Release N: false (the builds a
// rollback from N+1 lands on must read what N+1 writes, so N reads rows and
// writes states). Release N+1: true.
inline constexpr bool kWriteWorkflowRows = false;

// Whether new workflow writes are rows: `configured` (the configuration's
// `workflow_storage` is "rows"), unless a test or the benchmark forces one
// form. Thread-safe.
bool WriteRows(bool configured);

// Test-only: makes WriteRows() return `forced` whatever is configured;
// std::nullopt leaves it to the configuration again. Thread-safe; set it
// before an agent starts.
void TEST_SetWriteRows(std::optional<bool> forced);

}  // namespace outbox::workflow

#endif  // OUTBOX_AGENT_CONFIG_WORKFLOW_ROWS_H_
