// Copyright (c) edge-outbox authors.

#include "agent/config/workflow_rows.h"

#include <atomic>

namespace outbox::workflow {
namespace {

// -1: as configured; 0 or 1: forced.
std::atomic<int> forced{-1};

}  // namespace

bool WriteRows(bool configured) {
  const int f = forced.load(std::memory_order_relaxed);
  return f < 0 ? configured : f == 1;
}

void TEST_SetWriteRows(std::optional<bool> on) {
  forced.store(on.has_value() ? static_cast<int>(*on) : -1,
               std::memory_order_relaxed);
}

}  // namespace outbox::workflow
