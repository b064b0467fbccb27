// Copyright (c) edge-outbox authors.

#include "lib/crash_points.h"

#include <atomic>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace outbox::internal {
namespace {

using Hook = std::function<void(absl::string_view)>;

std::atomic<bool> g_armed{false};
absl::Mutex g_mu(absl::kConstInit);
std::shared_ptr<const Hook>* g_hook ABSL_GUARDED_BY(g_mu) = nullptr;

}  // namespace

void TEST_SetCrashHook(std::function<void(absl::string_view point)> hook) {
  absl::MutexLock l(&g_mu);
  delete g_hook;
  g_hook = hook ? new std::shared_ptr<const Hook>(
                      std::make_shared<const Hook>(std::move(hook)))
                : nullptr;
  g_armed.store(g_hook != nullptr);
}

void CrashPoint(absl::string_view point) {
  if (!g_armed.load(std::memory_order_relaxed)) return;
  std::shared_ptr<const Hook> hook;
  {
    absl::MutexLock l(&g_mu);
    if (g_hook != nullptr) hook = *g_hook;
  }
  // Called without g_mu: a hook may block (a test holding a group leader
  // back) while other threads pass other points.
  if (hook != nullptr) (*hook)(point);
}

}  // namespace outbox::internal
