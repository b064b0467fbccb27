// Copyright (c) edge-outbox authors.
//
// Resident memory of a store under each Options::MemoryProfile. Each profile
// runs in a child process of its own (so one run's heap does not count for
// the other): commit 40,000 sales (1 KiB record + 1 KiB event each), deliver
// half, reopen, then read the rest of the queue. Prints the peak and final
// resident set sizes (VmHWM, VmRSS) and the ratio small/default. Label: bench.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "tests/testing/events.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

constexpr int kSales = 40000;

// A line of /proc/self/status, in KiB ("VmRSS", "VmHWM").
long StatusKib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      long kib = 0;
      std::string digits;
      for (char c : line) {
        if (c >= '0' && c <= '9') digits.push_back(c);
      }
      if (absl::SimpleAtoi(digits, &kib)) return kib;
    }
  }
  return -1;
}

// The child's work; returns "peak_kib final_kib" or an error text.
std::string Workload(Options::MemoryProfile profile, const std::string& path) {
  Options options;
  options.tables = {"sales"};
  options.memory_profile = profile;
  options.sync = false;  // memory, not fsync latency, is measured here
  auto store = Store::Open(options, path);
  if (!store.ok()) return store.status().ToString();
  const std::string kilobyte(1024, 'x');
  for (int i = 0; i < kSales; ++i) {
    Txn txn;
    txn.Put("sales", absl::StrCat("sale-", i), kilobyte);
    txn.Emit(testing::MakeEvent("sale.created", absl::StrCat("till-", i % 8),
                                kilobyte));
    if (!(*store)->Commit(txn).ok()) return "commit failed";
  }
  for (int delivered = 0; delivered < kSales / 2;) {
    auto due = (*store)->NextDue(8);
    if (!due.ok() || due->events.empty()) return "nothing due";
    for (const PendingEvent& e : due->events) {
      if (!(*store)->MarkDelivered(e).ok()) return "mark failed";
      ++delivered;
    }
  }
  if (!(*store)->Close().ok()) return "close failed";
  store->reset();
  store = Store::Open(options, path);
  if (!store.ok()) return store.status().ToString();
  auto pending = (*store)->ListPending(kSales);
  if (!pending.ok() || pending->size() != kSales / 2) return "list failed";
  return absl::StrCat(StatusKib("VmHWM"), " ", StatusKib("VmRSS"));
}

// Runs Workload in a child process; returns its output line.
std::string RunInChild(Options::MemoryProfile profile,
                       const std::string& path) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string out = Workload(profile, path);
    ssize_t ignored = write(fds[1], out.data(), out.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return out;
}

TEST(MemoryProfileBench, ResidentMemoryPerProfile) {
  testing::TempDir dir;
  long peak[2], final_rss[2];
  const Options::MemoryProfile profiles[2] = {Options::MemoryProfile::kDefault,
                                              Options::MemoryProfile::kSmall};
  for (int i = 0; i < 2; ++i) {
    const std::string out =
        RunInChild(profiles[i], dir.Sub(absl::StrCat("db", i)));
    ASSERT_EQ(std::sscanf(out.c_str(), "%ld %ld", &peak[i], &final_rss[i]), 2)
        << out;
  }
  std::printf(
      "resident memory, %d sales of 2 KiB, half delivered, reopened, rest "
      "listed:\n"
      "  kDefault: peak %6ld KiB, after reopen %6ld KiB\n"
      "  kSmall:   peak %6ld KiB, after reopen %6ld KiB (peak ratio %.2f)\n",
      kSales, peak[0], final_rss[0], peak[1], final_rss[1],
      static_cast<double>(peak[1]) / peak[0]);
}

}  // namespace
}  // namespace outbox
