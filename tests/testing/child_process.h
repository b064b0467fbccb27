// Copyright (c) edge-outbox authors.
//
// A child process whose stdout the test reads line by line as it is written,
// and which the test can SIGKILL at any moment: the harness of kill suites.

#ifndef OUTBOX_TESTS_TESTING_CHILD_PROCESS_H_
#define OUTBOX_TESTS_TESTING_CHILD_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace outbox::testing {

// One running child. REQUIRES: External synchronization.
class ChildProcess {
 public:
  // Starts `binary args...` with stdin from /dev/null, stdout on a pipe to
  // this process and stderr appended to `stderr_path`.
  // Errors: kUnavailable if it cannot be started.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      const std::string& binary, const std::vector<std::string>& args,
      const std::string& stderr_path);

  // SIGKILLs and reaps the child if it is still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  enum class Read { kLine, kTimeout, kEof };
  // Waits until `deadline` for the next complete stdout line (without its
  // newline). kEof: the child closed stdout (it exited); a last line without
  // a newline is never returned, since the child may have died writing it.
  Read ReadLine(absl::Time deadline, std::string* line);

  // SIGKILLs the child and reaps it. Lines it wrote before dying stay
  // readable with ReadLine. REQUIRES: the child was not reaped yet.
  void Kill();

  // Waits until `deadline` for the child to exit. Returns its exit code,
  // 128 + signal if a signal ended it, or -1 on timeout.
  int Wait(absl::Time deadline);

  bool reaped() const { return reaped_; }
  int exit_code() const { return exit_code_; }

 private:
  ChildProcess(pid_t pid, int stdout_fd) : pid_(pid), stdout_fd_(stdout_fd) {}

  // Moves whatever the pipe holds into buffer_; false at end of file.
  bool Fill();

  const pid_t pid_;
  const int stdout_fd_;
  std::string buffer_;
  bool eof_ = false;
  bool reaped_ = false;
  int exit_code_ = -1;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_CHILD_PROCESS_H_
