// Copyright (c) edge-outbox authors.

#include "tests/testing/sink_process.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/testing/target_command.h"

namespace outbox::sink {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string UniquePrefix(const std::string& dir) {
  static std::atomic<int> counter{0};
  return absl::StrCat(dir, "/run-", getpid(), "-", counter++);
}

}  // namespace

absl::StatusOr<ExitResult> RunToExit(const std::string& binary,
                                     const std::string& dir,
                                     const std::vector<std::string>& args,
                                     absl::Duration timeout) {
  const std::string prefix = UniquePrefix(dir);
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::StartToFiles(testing::TargetCommand(binary, args),
                                 prefix + ".out", prefix + ".err");
  if (!child.ok()) return child.status();
  ExitResult result;
  result.exit_code = (*child)->Wait(absl::Now() + timeout);
  if (result.exit_code == -1) {
    return absl::DeadlineExceededError(
        absl::StrCat(binary, " did not exit by itself"));  // then killed
  }
  result.out = ReadFile(prefix + ".out");
  result.err = ReadFile(prefix + ".err");
  return result;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

absl::Status StopCleanly(SinkProcess* sink) {
  absl::StatusOr<int> code = sink->Stop();
  if (!code.ok()) return code.status();
  if (*code != 0) {
    return absl::InternalError(
        absl::StrCat("outbox-sink exited with ", *code, ": ", sink->Stderr()));
  }
  return absl::OkStatus();
}

}  // namespace outbox::sink
