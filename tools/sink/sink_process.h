// Copyright (c) edge-outbox authors.
//
// Runs the real outbox-sink binary as a child process (platform/
// child_process.h) and waits until it listens: for outbox-demo and for the
// suites that need a real receiver (they read its --log themselves).

#ifndef OUTBOX_TOOLS_SINK_SINK_PROCESS_H_
#define OUTBOX_TOOLS_SINK_SINK_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/child_process.h"

namespace outbox::sink {

// One running outbox-sink. REQUIRES: External synchronization.
class SinkProcess {
 public:
  // Starts `command` (outbox-sink's path and its flags; tests of cross
  // builds put the emulator first) plus `--port <port> --port-file
  // <dir>/...` (port 0: a free one), its stdout and stderr going to files in
  // `dir`, and waits until it has written its port. Errors: PosixError codes
  // if it cannot be started; kUnavailable if it exits early (the message
  // includes its stderr) or does not come up in `startup_timeout` (it is
  // killed).
  static absl::StatusOr<std::unique_ptr<SinkProcess>> Start(
      const std::vector<std::string>& command, const std::string& dir,
      absl::Duration startup_timeout = absl::Seconds(10), int port = 0);

  // Kills the process (SIGKILL) if Stop() was not called.
  ~SinkProcess() = default;
  SinkProcess(const SinkProcess&) = delete;
  SinkProcess& operator=(const SinkProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return child_->pid(); }

  // Sends SIGTERM and waits. Returns the exit code, or 128 + the signal
  // number if it died of a signal. Errors: kFailedPrecondition if it was
  // stopped (or reaped) already.
  absl::StatusOr<int> Stop();

  // Stop(), and kInternal naming its stderr file unless it exited 0.
  absl::Status StopCleanly();

  // What it wrote to stderr so far ("" if that cannot be read).
  std::string Stderr() const;
  const std::string& stderr_path() const { return stderr_path_; }

 private:
  SinkProcess(std::unique_ptr<ChildProcess> child, int port,
              std::string stderr_path)
      : child_(std::move(child)),
        port_(port),
        stderr_path_(std::move(stderr_path)) {}

  std::unique_ptr<ChildProcess> child_;
  int port_;
  std::string stderr_path_;
};

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_SINK_PROCESS_H_
