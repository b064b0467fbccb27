// Copyright (c) edge-outbox authors.
//
// Test helper: runs the real outbox-sink binary as a child process and reads
// its request log; runs other binaries to completion. Both are built on
// ChildProcess (child_process.h). For unit tests here and for integration
// suites that need a receiver (pass $<TARGET_FILE:outbox-sink>).

#ifndef OUTBOX_TESTS_TESTING_SINK_PROCESS_H_
#define OUTBOX_TESTS_TESTING_SINK_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tests/testing/child_process.h"

namespace outbox::sink {

// One running outbox-sink. REQUIRES: External synchronization.
class SinkProcess {
 public:
  // Starts `binary` with `args` plus `--port <port> --port-file <dir>/...`
  // (port 0: a free one), its stdout and stderr going to files in `dir`, and
  // waits until it has written its port. Errors: PosixError codes if it
  // cannot be started; kUnavailable if it exits early (the message includes
  // its stderr) or does not come up in `startup_timeout` (it is killed).
  static absl::StatusOr<std::unique_ptr<SinkProcess>> Start(
      const std::string& binary, const std::string& dir,
      const std::vector<std::string>& args,
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

  std::string Stderr() const;

 private:
  SinkProcess(std::unique_ptr<testing::ChildProcess> child, int port,
              std::string stderr_path)
      : child_(std::move(child)),
        port_(port),
        stderr_path_(std::move(stderr_path)) {}

  std::unique_ptr<testing::ChildProcess> child_;
  int port_;
  std::string stderr_path_;
};

// Runs `binary args...` to completion and returns its exit code, stdout and
// stderr. Errors: PosixError codes if it cannot be started;
// kDeadlineExceeded if it does not exit by itself within `timeout` (it is
// killed).
struct ExitResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
absl::StatusOr<ExitResult> RunToExit(
    const std::string& binary, const std::string& dir,
    const std::vector<std::string>& args,
    absl::Duration timeout = absl::Seconds(10));

// The lines of a file (without newlines); empty if it does not exist.
std::vector<std::string> ReadLines(const std::string& path);

// Member `key` of the JSON object `line` (a request-log line, or any JSON
// object such as a record outbox-pos-sim wrote), printed back as compact
// JSON: "\"abc\"", "true", "12", "null"; nullopt if it has no such member or
// `line` is not a JSON object.
std::optional<std::string> JsonField(absl::string_view line,
                                     absl::string_view key);

// The value of member `key` of the JSON object `line` if it is a string;
// "" otherwise (absent, null, not a string, `line` not JSON).
std::string JsonString(absl::string_view line, absl::string_view key);

}  // namespace outbox::sink

#endif  // OUTBOX_TESTS_TESTING_SINK_PROCESS_H_
