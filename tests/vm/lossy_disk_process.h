// Copyright (c) edge-outbox authors.
//
// LossyDiskProcess: outbox-lossy-disk as a child of the harness (or a test):
// started on a free loopback port, cut with SIGUSR1, asked for its counts
// with SIGUSR2, stopped with SIGTERM, each answered by the line the disk
// prints on stdout (disk_server.h), which this class waits for so that a
// board booted after Cut() returns sees the disk after the cut.
// REQUIRES: External synchronization.

#ifndef OUTBOX_TESTS_VM_LOSSY_DISK_PROCESS_H_
#define OUTBOX_TESTS_VM_LOSSY_DISK_PROCESS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/child_process.h"

namespace outbox::vm {

// The key=value fields of one of the disk's lines ("cut 3 mode=drop
// unflushed=4 ..."); the words without '=' are left out.
using DiskLine = std::map<std::string, uint64_t>;

class LossyDiskProcess {
 public:
  // Starts `binary` --platter=`platter` --port=0 `args`..., with stderr to
  // `stderr_path`, and waits for its "listening" line.
  // Errors: ChildProcess::Start's; kUnavailable if the disk exited or said
  // nothing within `timeout` (its stderr says why).
  static absl::StatusOr<std::unique_ptr<LossyDiskProcess>> Start(
      const std::string& binary, const std::string& platter,
      const std::vector<std::string>& args, const std::string& stderr_path,
      absl::Duration timeout = absl::Seconds(10));

  int port() const { return port_; }
  // "nbd://127.0.0.1:<port>", for qemu's -drive file= and qemu-io.
  std::string Url() const;

  // Cuts the power and returns the "cut" line's fields (unflushed, kept,
  // dropped). REQUIRES: the client (qemu) is dead already, or it is cut
  // off mid-request. Errors: kUnavailable if no answer within `timeout`.
  absl::StatusOr<DiskLine> Cut(absl::Duration timeout = absl::Seconds(10));

  // The "counts" line's fields (reads, writes, fua_writes, flushes, trims,
  // cuts, kept, dropped, connections, unflushed: the block writes the cache
  // holds now). Errors: as Cut's.
  absl::StatusOr<DiskLine> Counts(absl::Duration timeout = absl::Seconds(10));

  // SIGTERM: a last cut, then the final counts; waits for the exit.
  // Errors: kInternal if it did not exit with 0; as Cut's.
  absl::StatusOr<DiskLine> Stop(absl::Duration timeout = absl::Seconds(10));

 private:
  explicit LossyDiskProcess(std::unique_ptr<ChildProcess> child)
      : child_(std::move(child)) {}

  // Sends `signal` (0: none) and returns the fields of the next line that
  // starts with `word`.
  absl::StatusOr<DiskLine> Ask(int signal, const std::string& word,
                               absl::Duration timeout);
  // The next line of stdout that starts with `word`, whole.
  absl::StatusOr<std::string> AwaitLine(const std::string& word,
                                        absl::Time deadline);

  std::unique_ptr<ChildProcess> child_;
  int port_ = 0;
};

// The fields of `line`.
DiskLine ParseDiskLine(const std::string& line);

}  // namespace outbox::vm

#endif  // OUTBOX_TESTS_VM_LOSSY_DISK_PROCESS_H_
