// Copyright (c) edge-outbox authors.
//
// The stored state of a workflow, decoded, for tests that read what the
// store kept (through the Store API, as the agent and outboxctl do).

#ifndef OUTBOX_TESTS_TESTING_WORKFLOW_STATE_H_
#define OUTBOX_TESTS_TESTING_WORKFLOW_STATE_H_

#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "proto/storage.pb.h"

namespace outbox::testing {

// The state of event `id`'s workflow in `store`; a test failure (and an
// empty state) when none is stored or it does not decode.
inline storage::WorkflowState StoredWorkflowState(Store* store,
                                                  const std::string& id) {
  storage::WorkflowState state;
  absl::StatusOr<WorkflowRecord> record = store->GetWorkflow(id);
  EXPECT_TRUE(record.ok()) << record.status();
  if (record.ok()) {
    EXPECT_TRUE(state.ParseFromString(record->state));
  }
  return state;
}

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_WORKFLOW_STATE_H_
