// Copyright (c) edge-outbox authors.
//
// Test helpers: run a binary to completion (on ChildProcess, platform/
// child_process.h) and read a file's lines, such as outbox-sink's request
// log. The sink itself runs as tools/sink/sink_process.h (SinkProcess), which
// this header brings along for the suites that need a receiver (pass
// TargetCommand($<TARGET_FILE:outbox-sink>, args)).

#ifndef OUTBOX_TESTS_TESTING_SINK_PROCESS_H_
#define OUTBOX_TESTS_TESTING_SINK_PROCESS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/sink/sink_process.h"

namespace outbox::sink {

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

// Stops `sink` (SIGTERM) and waits. Errors: Stop()'s, or kInternal with
// its stderr if it did not exit with 0 (tests' TearDown checks this).
absl::Status StopCleanly(SinkProcess* sink);

// The lines of a file (without newlines); empty if it does not exist.
std::vector<std::string> ReadLines(const std::string& path);

}  // namespace outbox::sink

#endif  // OUTBOX_TESTS_TESTING_SINK_PROCESS_H_
