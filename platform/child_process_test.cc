// Copyright (c) edge-outbox authors.

#include "platform/child_process.h"

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

std::string TempPath(const char* name) {
  return std::string(::testing::TempDir()) + "/child_process_test_" + name;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

TEST(ChildProcessTest, ReadsStdoutLinesAndTheExitCode) {
  auto child = ChildProcess::Start(
      {"/bin/sh", "-c", "echo one; echo two; printf torn; exit 3"},
      TempPath("err"));
  ASSERT_TRUE(child.ok()) << child.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string line;
  ASSERT_EQ((*child)->ReadLine(deadline, &line), ChildProcess::Read::kLine);
  EXPECT_EQ(line, "one");
  ASSERT_EQ((*child)->ReadLine(deadline, &line), ChildProcess::Read::kLine);
  EXPECT_EQ(line, "two");
  // A last line without its newline is never returned.
  EXPECT_EQ((*child)->ReadLine(deadline, &line), ChildProcess::Read::kEof);
  EXPECT_EQ((*child)->Wait(absl::InfiniteFuture()), 3);
}

TEST(ChildProcessTest, PastDeadlineStillReadsWhatThePipeHolds) {
  auto child = ChildProcess::Start(
      {"/bin/sh", "-c", "echo early; exec sleep 60"}, TempPath("err"));
  ASSERT_TRUE(child.ok()) << child.status();
  std::string line;
  ChildProcess::Read got = ChildProcess::Read::kTimeout;
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  // Only past deadlines: the line is read without waiting once it is there.
  while (got == ChildProcess::Read::kTimeout && absl::Now() < give_up) {
    got = (*child)->ReadLine(absl::InfinitePast(), &line);
    if (got == ChildProcess::Read::kTimeout) {
      absl::SleepFor(absl::Milliseconds(5));
    }
  }
  ASSERT_EQ(got, ChildProcess::Read::kLine);
  EXPECT_EQ(line, "early");
  EXPECT_EQ((*child)->ReadLine(absl::InfinitePast(), &line),
            ChildProcess::Read::kTimeout);
}

TEST(ChildProcessTest, KillReportsTheSignalAndSignalAfterReapFails) {
  auto child =
      ChildProcess::Start({"/bin/sh", "-c", "exec sleep 60"}, TempPath("err"));
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ((*child)->Wait(absl::Now() + absl::Milliseconds(20)), -1);
  (*child)->Kill();
  EXPECT_TRUE((*child)->reaped());
  EXPECT_EQ((*child)->exit_code(), 128 + SIGKILL);
  EXPECT_EQ((*child)->Signal(SIGTERM).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ChildProcessTest, StartToFilesWritesBothStreams) {
  const std::string out = TempPath("out"), err = TempPath("err2");
  auto child = ChildProcess::StartToFiles(
      {"/bin/sh", "-c", "echo to-out; echo to-err >&2"}, out, err);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ((*child)->Wait(absl::InfiniteFuture()), 0);
  EXPECT_EQ(Slurp(out), "to-out\n");
  EXPECT_EQ(Slurp(err), "to-err\n");
}

TEST(ChildProcessTest, MissingBinaryOrEmptyCommandIsAnError) {
  EXPECT_EQ(ChildProcess::Start({}, TempPath("err")).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::unique_ptr<ChildProcess>> missing =
      ChildProcess::Start({"/nonexistent/binary"}, TempPath("err"));
  if (missing.ok()) {
    // Under qemu-user (the cross-build tests) posix_spawn cannot see the
    // exec fail; the child exits 127 instead, as it would from a shell.
    EXPECT_EQ((*missing)->Wait(absl::InfiniteFuture()), 127);
  } else {
    EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  }
}

}  // namespace
}  // namespace outbox
