// Copyright (c) edge-outbox authors.

#include "lib/crash_points.h"

#include <atomic>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace outbox::internal {
namespace {

std::atomic<bool> g_armed{false};
absl::Mutex g_mu(absl::kConstInit);
std::function<void(absl::string_view)>* g_hook ABSL_GUARDED_BY(g_mu) = nullptr;

}  // namespace

void TEST_SetCrashHook(std::function<void(absl::string_view point)> hook) {
  absl::MutexLock l(&g_mu);
  delete g_hook;
  g_hook = hook ? new std::function<void(absl::string_view)>(std::move(hook))
                : nullptr;
  g_armed.store(g_hook != nullptr);
}

void CrashPoint(absl::string_view point) {
  if (!g_armed.load(std::memory_order_relaxed)) return;
  absl::MutexLock l(&g_mu);
  if (g_hook != nullptr) (*g_hook)(point);
}

}  // namespace outbox::internal
