// Copyright (c) edge-outbox authors.

#include "tools/sink/sink_process.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "platform/files.h"

namespace outbox::sink {
namespace {

// The sink's own small files: its port, its stderr.
std::string ReadOwnFile(const std::string& path) {
  return ReadFileChecked(path, ReadFileOptions()).value_or("");
}

std::string UniquePrefix(const std::string& dir) {
  static std::atomic<int> counter{0};
  return absl::StrCat(dir, "/sink-", getpid(), "-", counter++);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SinkProcess>> SinkProcess::Start(
    const std::vector<std::string>& command, const std::string& dir,
    absl::Duration startup_timeout, int port) {
  const std::string prefix = UniquePrefix(dir);
  const std::string port_file = prefix + ".port";
  std::vector<std::string> full = command;
  full.insert(full.end(),
              {"--port", absl::StrCat(port), "--port-file", port_file});
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::StartToFiles(full, prefix + ".out", prefix + ".err");
  if (!child.ok()) return child.status();

  const absl::Time deadline = absl::Now() + startup_timeout;
  while (absl::Now() < deadline) {
    int bound = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadOwnFile(port_file)),
                         &bound) &&
        bound > 0) {
      return std::unique_ptr<SinkProcess>(
          new SinkProcess(*std::move(child), bound, prefix + ".err"));
    }
    const int exit_code = (*child)->Wait(absl::InfinitePast());
    if (exit_code != -1) {
      return absl::UnavailableError(
          absl::StrCat("outbox-sink exited with ", exit_code,
                       " before listening: ", ReadOwnFile(prefix + ".err")));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  // ~ChildProcess kills it.
  return absl::UnavailableError("outbox-sink did not write its port in time");
}

absl::StatusOr<int> SinkProcess::Stop() {
  if (child_->reaped()) return absl::FailedPreconditionError("already stopped");
  absl::Status signalled = child_->Signal(SIGTERM);
  if (!signalled.ok()) return signalled;
  return child_->Wait(absl::InfiniteFuture());
}

absl::Status SinkProcess::StopCleanly() {
  absl::StatusOr<int> code = Stop();
  if (!code.ok()) return code.status();
  if (*code != 0) {
    return absl::InternalError(absl::StrCat("outbox-sink exited with ", *code,
                                            "; see ", stderr_path_));
  }
  return absl::OkStatus();
}

std::string SinkProcess::Stderr() const { return ReadOwnFile(stderr_path_); }

}  // namespace outbox::sink
