// Copyright (c) edge-outbox authors.
//
// dist/outbox-agent.service.in as systemd reads it: `systemd-analyze verify`
// on the unit generated from it (ExecStart at the built outbox-agent, which
// verify requires to exist; the installed copy differs only in that path),
// and dist/outbox-agent.sysusers.conf through `systemd-sysusers`. Without
// systemd's tools these tests skip, and fail under OUTBOX_REQUIRE
// (tests/testing/skip.h): toolchains/install-deps.sh installs them for CI.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "outbox/agent.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/skip.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

constexpr char kUnit[] = OUTBOX_BUILD_TREE_UNIT;
constexpr char kSysusers[] = OUTBOX_DIST_DIR "/outbox-agent.sysusers.conf";

// The path of `name` on $PATH, or "" if it is not there.
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = std::string(dir) + "/" + name;
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Sets `*path` to systemd's tool `name`, or skips the test (fails it under
// OUTBOX_REQUIRE) and leaves `*path` empty: the caller then returns.
void FindSystemdTool(const std::string& name, std::string* path) {
  *path = FindOnPath(name);
  if (path->empty()) {
    OUTBOX_SKIP_WITHOUT("systemd", name +
                                       " is not on PATH (Debian package "
                                       "systemd)");
  }
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ServiceUnitTest, SystemdAnalyzeVerifyAcceptsTheUnit) {
  std::string analyze;
  FindSystemdTool("systemd-analyze", &analyze);
  if (analyze.empty()) return;
  testing::TempDir dir;
  absl::StatusOr<sink::ExitResult> run = sink::RunToExit(
      analyze, dir.path(), {"verify", kUnit}, absl::Seconds(60));
  ASSERT_OUTBOX_OK(run.status());
  // verify exits 0 even for a directive it ignores ("Failed to parse protect
  // system value, ignoring"), so anything it says is a failure.
  EXPECT_EQ(run->exit_code, 0) << run->err;
  EXPECT_EQ(run->out + run->err, "");
}

TEST(ServiceUnitTest, SysusersCreatesTheUserTheUnitRunsAs) {
  std::string sysusers;
  FindSystemdTool("systemd-sysusers", &sysusers);
  if (sysusers.empty()) return;
  if (geteuid() != 0) {
    OUTBOX_SKIP_WITHOUT("root", "systemd-sysusers --root needs root");
  }
  testing::TempDir root;
  std::filesystem::create_directories(root.Sub("etc"));
  absl::StatusOr<sink::ExitResult> run = sink::RunToExit(
      sysusers, root.path(), {"--root=" + root.path(), kSysusers});
  ASSERT_OUTBOX_OK(run.status());
  ASSERT_EQ(run->exit_code, 0) << run->err;
  EXPECT_THAT(ReadAll(root.Sub("etc/passwd")), HasSubstr("outbox-agent:x:"));
  EXPECT_THAT(ReadAll(kUnit), HasSubstr("\nUser=outbox-agent\n"));
}

TEST(ServiceUnitTest, StopTimeoutOutlastsTheAgentsShutdownGrace) {
  // On SIGTERM the agent gives requests in flight shutdown_grace, then
  // closes the store (an fsync); systemd SIGKILLs it after TimeoutStopSec.
  std::smatch match;
  const std::string unit = ReadAll(kUnit);
  ASSERT_TRUE(
      std::regex_search(unit, match, std::regex("\nTimeoutStopSec=(\\S+)\n")))
      << kUnit;
  absl::Duration stop_timeout;
  ASSERT_TRUE(absl::ParseDuration(match[1].str(), &stop_timeout)) << match[1];
  EXPECT_GE(stop_timeout, 2 * AgentOptions().shutdown_grace);
}

}  // namespace
}  // namespace outbox
