// Copyright (c) edge-outbox authors.

#include "agent/workflow/rows.h"

#include <atomic>

namespace outbox::workflow {
namespace {

std::atomic<bool> write_rows{kWriteWorkflowRows};

}  // namespace

bool WriteRows() { return write_rows.load(std::memory_order_relaxed); }

void TEST_SetWriteRows(bool on) {
  write_rows.store(on, std::memory_order_relaxed);
}

}  // namespace outbox::workflow
