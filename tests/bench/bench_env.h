// Copyright (c) edge-outbox authors.
//
// What every row of outbox_bench needs: the scale knobs (environment
// variables, full scale by default), latency percentiles, and the figures
// Linux keeps about a thread or a process: CPU time, bytes written, resident
// memory. Linux only, like the rest of the project.

#ifndef OUTBOX_TESTS_BENCH_BENCH_ENV_H_
#define OUTBOX_TESTS_BENCH_BENCH_ENV_H_

#include <pthread.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace outbox::bench {

// How big a run is. Each field is read from the environment variable named
// beside it; the defaults are the full scale that issue 11 asks for.
struct Scale {
  int commits = 20000;       // OUTBOX_BENCH_COMMITS: per commit/ack row
  int producers = 8;         // OUTBOX_BENCH_PRODUCERS: the N-thread rows
  int drain_events = 20000;  // OUTBOX_BENCH_DRAIN_EVENTS: per drain row
  // OUTBOX_BENCH_CELLULAR_EVENTS: the backlog of the drain-time rows
  int cellular_events = 100000;
  int events = 1000000;         // OUTBOX_BENCH_EVENTS: churned / pending
  std::vector<int> open_sizes;  // OUTBOX_BENCH_OPEN_SIZES: "100000,1000000"
  int idle_seconds = 10;        // OUTBOX_BENCH_IDLE_SECONDS: offline idle
  int offline_commits = 200;    // OUTBOX_BENCH_OFFLINE_COMMITS: at 50/s
  int offline_seconds = 20;     // OUTBOX_BENCH_OFFLINE_SECONDS: their cap
  // OUTBOX_BENCH_SECTIONS: "commits,open" runs those only; empty: all.
  std::vector<std::string> sections;

  static Scale FromEnv();
  // "OUTBOX_BENCH_COMMITS=20000 ..." as the run used them.
  std::string Describe() const;
};

// Wall time since construction, on the monotonic clock.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  absl::Duration Elapsed() const {
    return absl::FromChrono(std::chrono::steady_clock::now() - start_);
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Per-operation latencies. REQUIRES: External synchronization.
class Latencies {
 public:
  void Add(absl::Duration d) { us_.push_back(absl::ToDoubleMicroseconds(d)); }
  void Merge(const Latencies& other);
  // The q-th percentile (0..100) in microseconds; 0 when empty. Sorts.
  double Percentile(double q);
  size_t size() const { return us_.size(); }

 private:
  std::vector<double> us_;
};

// A file that `bytes` at a time are appended to with write() and made
// durable with fdatasync(): what a synced commit of that size cannot beat on
// this disk. REQUIRES: External synchronization.
class AppendFile {
 public:
  // Errors: kUnavailable.
  static absl::StatusOr<std::unique_ptr<AppendFile>> Open(
      const std::string& path, size_t bytes);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  absl::Status AppendAndSync();

 private:
  AppendFile(int fd, size_t bytes) : fd_(fd), block_(bytes, 'w') {}
  const int fd_;
  const std::string block_;
};

// fdatasync()s per second of `bytes` appends to a scratch file in `dir`
// over `duration`: how fast the disk is right now (0 on error).
double ProbeDisk(const std::string& dir, size_t bytes, absl::Duration duration);

// CPU time of the calling thread, and of another thread of this process.
absl::Duration ThreadCpu();
absl::Duration ThreadCpu(pthread_t thread);
// The calling thread's CPU time spent in the kernel (getrusage
// RUSAGE_THREAD: system calls, page faults, the file system's work).
absl::Duration ThreadKernelCpu();
// CPU time (user + system) of the whole process so far.
absl::Duration ProcessCpu();
// The same of another process (/proc/<pid>/stat, in clock ticks: 10 ms);
// zero when unreadable.
absl::Duration ProcessCpu(pid_t pid);

// write_bytes of /proc/<pid>/io (0: this process): bytes this process caused
// to be sent to storage, every thread included (RocksDB's background flushes
// and compactions too). -1 when unreadable.
int64_t WriteBytes(pid_t pid = 0);

// fsyncs every file under `dir`. write_bytes counts a page when it turns
// dirty, not when it reaches the disk: a measured write into a page that an
// unsynced fill left dirty would count nothing. Rows that fill a store or
// database without syncing call this before they measure. Errors:
// kUnavailable.
absl::Status SyncFiles(const std::string& dir);

// A "VmRSS"/"VmHWM" line of /proc/<pid>/status in KiB (0: this process);
// -1 when unreadable.
int64_t StatusKib(const std::string& field, pid_t pid = 0);

// /proc/loadavg's three averages, "1.05 1.98 1.45".
std::string LoadAverage();

// The file system type of `path` ("ext4", "tmpfs", ...), for the header: an
// fsync on tmpfs costs nothing and would make every row meaningless.
std::string FileSystemType(const std::string& path);

}  // namespace outbox::bench

#endif  // OUTBOX_TESTS_BENCH_BENCH_ENV_H_
