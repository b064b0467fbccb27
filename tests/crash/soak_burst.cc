// Copyright (c) edge-outbox authors.

#include "tests/crash/soak_burst.h"

#include <thread>

#include "absl/synchronization/notification.h"

namespace outbox::testing {

void CommitFromThreads(Store* store, const std::function<bool()>& powered,
                       std::vector<std::vector<BurstCommit>>* shares) {
  // Started together, so that each thread's first commit already finds the
  // others queued or writing.
  absl::Notification go;
  std::vector<std::thread> threads;
  threads.reserve(shares->size());
  for (std::vector<BurstCommit>& share : *shares) {
    threads.emplace_back([store, &powered, &go, &share] {
      go.WaitForNotification();
      for (BurstCommit& c : share) {
        c.result = store->Commit(*c.txn);
        c.power_on = powered();
      }
    });
  }
  go.Notify();
  for (std::thread& t : threads) t.join();
}

}  // namespace outbox::testing
