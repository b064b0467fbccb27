// Copyright (c) edge-outbox authors.

#include "tests/testing/sink_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

extern char** environ;

namespace outbox::sink {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Spawns binary with args, stdin from /dev/null, stdout/stderr to files.
absl::StatusOr<pid_t> Spawn(const std::string& binary,
                            const std::vector<std::string>& args,
                            const std::string& out_path,
                            const std::string& err_path) {
  // In a cross build, ctest runs this test under an emulator (qemu-user),
  // but the kernel cannot exec a foreign binary by itself: start the sink
  // through the same emulator. Empty in native builds.
  const std::vector<std::string> emulator =
      absl::StrSplit(OUTBOX_TEST_EMULATOR, ' ', absl::SkipEmpty());
  std::vector<char*> argv;
  for (const std::string& e : emulator)
    argv.push_back(const_cast<char*>(e.c_str()));
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot start ", binary, ": ", std::strerror(rc)));
  }
  return pid;
}

std::string UniquePrefix(const std::string& dir) {
  static std::atomic<int> counter{0};
  return absl::StrCat(dir, "/sink-", getpid(), "-", counter++);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SinkProcess>> SinkProcess::Start(
    const std::string& binary, const std::string& dir,
    const std::vector<std::string>& args, absl::Duration startup_timeout,
    int port) {
  const std::string prefix = UniquePrefix(dir);
  const std::string port_file = prefix + ".port";
  std::vector<std::string> full_args = args;
  full_args.insert(full_args.end(),
                   {"--port", absl::StrCat(port), "--port-file", port_file});
  absl::StatusOr<pid_t> pid =
      Spawn(binary, full_args, prefix + ".out", prefix + ".err");
  if (!pid.ok()) return pid.status();

  const absl::Time deadline = absl::Now() + startup_timeout;
  while (absl::Now() < deadline) {
    int bound = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(port_file)),
                         &bound) &&
        bound > 0) {
      return std::unique_ptr<SinkProcess>(
          new SinkProcess(*pid, bound, prefix + ".err"));
    }
    int status = 0;
    if (waitpid(*pid, &status, WNOHANG) == *pid) {
      return absl::UnavailableError(
          absl::StrCat("outbox-sink exited with ", DecodeWaitStatus(status),
                       " before listening: ", ReadFile(prefix + ".err")));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  kill(*pid, SIGKILL);
  waitpid(*pid, nullptr, 0);
  return absl::UnavailableError("outbox-sink did not write its port in time");
}

SinkProcess::~SinkProcess() {
  if (!stopped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

absl::StatusOr<int> SinkProcess::Stop() {
  if (stopped_) return absl::FailedPreconditionError("already stopped");
  stopped_ = true;
  if (kill(pid_, SIGTERM) != 0) {
    return absl::ErrnoToStatus(errno, "kill(SIGTERM)");
  }
  int status = 0;
  if (waitpid(pid_, &status, 0) != pid_) {
    return absl::ErrnoToStatus(errno, "waitpid");
  }
  return DecodeWaitStatus(status);
}

std::string SinkProcess::Stderr() const { return ReadFile(stderr_path_); }

absl::StatusOr<ExitResult> RunToExit(const std::string& binary,
                                     const std::string& dir,
                                     const std::vector<std::string>& args,
                                     absl::Duration timeout) {
  const std::string prefix = UniquePrefix(dir);
  absl::StatusOr<pid_t> pid =
      Spawn(binary, args, prefix + ".out", prefix + ".err");
  if (!pid.ok()) return pid.status();
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (waitpid(*pid, &status, WNOHANG) != *pid) {
    if (absl::Now() > deadline) {
      kill(*pid, SIGKILL);
      waitpid(*pid, nullptr, 0);
      return absl::DeadlineExceededError(
          absl::StrCat(binary, " did not exit by itself"));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  ExitResult result;
  result.exit_code = DecodeWaitStatus(status);
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

std::optional<std::string> JsonField(absl::string_view line,
                                     absl::string_view key) {
  const std::string needle = absl::StrCat("\"", key, "\":");
  size_t pos = 0;
  while ((pos = line.find(needle, pos)) != absl::string_view::npos) {
    if (pos > 0 && (line[pos - 1] == ',' || line[pos - 1] == '{')) break;
    ++pos;
  }
  if (pos == absl::string_view::npos) return std::nullopt;
  const size_t start = pos + needle.size();
  size_t end = start;
  if (end < line.size() && line[end] == '"') {
    ++end;
    while (end < line.size() && line[end] != '"') {
      end += line[end] == '\\' ? 2 : 1;
    }
    ++end;  // The closing quote.
  } else {
    while (end < line.size() && line[end] != ',' && line[end] != '}') ++end;
  }
  if (end > line.size()) return std::nullopt;
  return std::string(line.substr(start, end - start));
}

std::string JsonStringValue(const std::optional<std::string>& json) {
  if (!json.has_value() || json->size() < 2 || (*json)[0] != '"') return "";
  std::string out;
  for (size_t i = 1; i + 1 < json->size(); ++i) {
    if ((*json)[i] == '\\' && i + 2 < json->size()) ++i;
    out.push_back((*json)[i]);
  }
  return out;
}

}  // namespace outbox::sink
