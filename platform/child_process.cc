// Copyright (c) edge-outbox authors.

#include "platform/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "platform/posix_error.h"

extern char** environ;

namespace outbox {
namespace {

// Where the child's stdout goes: a pipe's write end, or a file.
struct Stdout {
  int pipe_fd = -1;
  std::string path;
};

// Spawns `command`, stdin from /dev/null, stderr to `stderr_path`.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& command,
                            const Stdout& out, const std::string& stderr_path,
                            int stderr_flags) {
  if (command.empty()) {
    return absl::InvalidArgumentError("cannot start an empty command");
  }
  std::vector<char*> argv;
  for (const std::string& a : command) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (out.pipe_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out.pipe_fd, 1);  // no CLOEXEC
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, out.path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | stderr_flags, 0644);
  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return PosixError(absl::StrCat("cannot start ", command[0]), rc);
  }
  return pid;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& command, const std::string& stderr_path) {
  // O_CLOEXEC on both ends: a child started later (the next run) must not
  // inherit this pipe, or the reader would never see end of file.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return PosixError("pipe2", errno);
  ScopedFd read_end(fds[0]);
  const ScopedFd write_end(fds[1]);  // the child has its own copy
  Stdout out;
  out.pipe_fd = write_end.get();
  absl::StatusOr<pid_t> pid = Spawn(command, out, stderr_path, O_APPEND);
  if (!pid.ok()) return pid.status();
  fcntl(read_end.get(), F_SETFL, fcntl(read_end.get(), F_GETFL) | O_NONBLOCK);
  return std::unique_ptr<ChildProcess>(
      new ChildProcess(*pid, std::move(read_end)));
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::StartToFiles(
    const std::vector<std::string>& command, const std::string& stdout_path,
    const std::string& stderr_path) {
  Stdout out;
  out.path = stdout_path;
  absl::StatusOr<pid_t> pid = Spawn(command, out, stderr_path, O_TRUNC);
  if (!pid.ok()) return pid.status();
  return std::unique_ptr<ChildProcess>(new ChildProcess(*pid, ScopedFd()));
}

ChildProcess::~ChildProcess() {
  if (!reaped_) Kill();
}

bool ChildProcess::Fill() {
  char chunk[4096];
  for (;;) {
    const ssize_t n = read(stdout_pipe_.get(), chunk, sizeof(chunk));
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
    } else if (n == 0) {
      return false;
    } else if (errno == EINTR) {
      continue;
    } else {
      return true;  // EAGAIN: the pipe is empty for now.
    }
  }
}

ChildProcess::Read ChildProcess::ReadLine(absl::Time deadline,
                                          std::string* line) {
  for (;;) {
    const size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      line->assign(buffer_, 0, newline);
      buffer_.erase(0, newline + 1);
      return Read::kLine;
    }
    if (eof_) return Read::kEof;
    // Past the deadline, one look at the pipe without waiting: what the
    // child already wrote (just before a kill, say) is still read.
    const absl::Duration left =
        std::max(deadline - absl::Now(), absl::ZeroDuration());
    const int timeout_ms =
        left == absl::ZeroDuration()
            ? 0
            : static_cast<int>(std::min<int64_t>(
                  absl::ToInt64Milliseconds(left) + 1, 1 << 30));
    pollfd p{stdout_pipe_.get(), POLLIN, 0};
    const int ready = poll(&p, 1, timeout_ms);
    if (ready < 0 && errno != EINTR) return Read::kEof;
    if (ready > 0) {
      if (!Fill()) eof_ = true;
    } else if (ready == 0 && timeout_ms == 0) {
      return Read::kTimeout;
    }
  }
}

absl::Status ChildProcess::Signal(int signal) {
  if (reaped_) {
    return absl::FailedPreconditionError(
        absl::StrCat("child ", pid_, " was already reaped"));
  }
  if (kill(pid_, signal) != 0) return PosixError("kill", errno);
  return absl::OkStatus();
}

void ChildProcess::Kill() {
  kill(pid_, SIGKILL);
  Wait(absl::InfiniteFuture());
}

void ChildProcess::Reaped(int status) {
  reaped_ = true;
  if (WIFEXITED(status)) {
    exit_code_ = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit_code_ = 128 + WTERMSIG(status);
  }
}

int ChildProcess::Wait(absl::Time deadline) {
  const int flags = deadline == absl::InfiniteFuture() ? 0 : WNOHANG;
  while (!reaped_) {
    int status = 0;
    const pid_t got = waitpid(pid_, &status, flags);
    if (got == pid_) {
      Reaped(status);
    } else if (got < 0 && errno != EINTR) {
      reaped_ = true;  // ECHILD: someone else reaped it; the code is unknown
    } else if (flags == WNOHANG && absl::Now() >= deadline) {
      return -1;
    } else if (flags == WNOHANG) {
      absl::SleepFor(absl::Milliseconds(2));
    }
  }
  return exit_code_;
}

}  // namespace outbox
