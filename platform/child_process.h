// Copyright (c) edge-outbox authors.
//
// The one runner of child processes: the real binaries (outbox-sink,
// outboxctl, outbox-pos-sim, the C example) started with posix_spawn, stdin
// from /dev/null, and reaped by whoever holds them. outbox-demo and the kill
// suites read stdout line by line as it is written and SIGKILL the child at
// any moment; the tests' SinkProcess and RunToExit (tests/testing/
// sink_process.h) send output to files. Tests of cross builds put the
// emulator in front of the command (tests/testing/target_command.h).

#ifndef OUTBOX_PLATFORM_CHILD_PROCESS_H_
#define OUTBOX_PLATFORM_CHILD_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/scoped_fd.h"

namespace outbox {

// One child. REQUIRES: External synchronization.
class ChildProcess {
 public:
  // Starts `command` (the path of the binary, then its arguments; no PATH
  // search) with stdout on a pipe to this process (read it with ReadLine)
  // and stderr appended to `stderr_path`.
  // Errors: kInvalidArgument for an empty command; PosixError codes of pipe2
  // and posix_spawn.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      const std::vector<std::string>& command, const std::string& stderr_path);

  // Starts `command` with stdout and stderr written to the files
  // `stdout_path` and `stderr_path` (created or truncated).
  // Errors: as Start.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> StartToFiles(
      const std::vector<std::string>& command, const std::string& stdout_path,
      const std::string& stderr_path);

  // SIGKILLs and reaps the child if it is still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  enum class Read { kLine, kTimeout, kEof };
  // Waits until `deadline` for the next complete stdout line (without its
  // newline); a deadline already past still returns a line the pipe holds.
  // kEof: the child closed stdout (it exited); a last line without a newline is
  // never returned, since the child may have died writing it. REQUIRES: started
  // with Start() (stdout on a pipe).
  Read ReadLine(absl::Time deadline, std::string* line);

  // Sends `signal`. Errors: kFailedPrecondition once the child is reaped
  // (its pid may belong to another process by now); PosixError codes of
  // kill.
  absl::Status Signal(int signal);

  // SIGKILLs the child and reaps it. Lines it wrote before dying stay
  // readable with ReadLine. REQUIRES: the child was not reaped yet.
  void Kill();

  // Waits until `deadline` (absl::InfiniteFuture(): as long as it takes)
  // for the child to exit. Returns its exit code, 128 + signal if a signal
  // ended it, or -1 on timeout.
  int Wait(absl::Time deadline);

  pid_t pid() const { return pid_; }
  bool reaped() const { return reaped_; }
  int exit_code() const { return exit_code_; }

 private:
  ChildProcess(pid_t pid, ScopedFd stdout_pipe)
      : pid_(pid), stdout_pipe_(std::move(stdout_pipe)) {}

  // Moves whatever the pipe holds into buffer_; false at end of file.
  bool Fill();
  // Records how the child ended, from waitpid's `status`.
  void Reaped(int status);

  const pid_t pid_;
  ScopedFd stdout_pipe_;  // read end; not valid with StartToFiles
  std::string buffer_;
  bool eof_ = false;
  bool reaped_ = false;
  int exit_code_ = -1;
};

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_CHILD_PROCESS_H_
