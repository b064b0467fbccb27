// Copyright (c) edge-outbox authors.
//
// Whether the workflow engine writes workflows as rows (a head, a row per
// step, the answers references read: feature workflow_rows, lib/keys.h) or
// as one state under "s", rewritten whole by every settlement.
//
// Rolled out in two releases (docs/firmware-updates.md), so that a rollback
// by one release always works: this release reads both and writes "s"
// states; the next one flips kWriteWorkflowRows. A store a rows writer
// touched is refused by builds that do not know workflow_rows.
//
// A workflow already stored as rows stays rows whatever this says (its
// requests are not stored: an "s" state written from it would lack them).

#ifndef OUTBOX_AGENT_WORKFLOW_ROWS_H_
#define OUTBOX_AGENT_WORKFLOW_ROWS_H_

namespace outbox::workflow {

// Release N: false (the builds a rollback from N+1 lands on must read what
// N+1 writes, so N reads rows and writes states). Release N+1: true.
inline constexpr bool kWriteWorkflowRows = false;

// kWriteWorkflowRows, unless a test or the benchmark set it otherwise.
// Thread-safe.
bool WriteRows();

// Test-only: makes WriteRows() return `on` until set again. Thread-safe;
// set it before an agent starts.
void TEST_SetWriteRows(bool on);

}  // namespace outbox::workflow

#endif  // OUTBOX_AGENT_WORKFLOW_ROWS_H_
