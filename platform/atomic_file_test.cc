// Copyright (c) edge-outbox authors.

#include "platform/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/child_process.h"
#include "tests/testing/skip.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Set in the environment of this test's run as nobody.
constexpr char kUnprivilegedRun[] = "OUTBOX_TEST_RUN_AS_NOBODY";

// `binary` with `filter`, run as the user nobody by setpriv, else by
// runuser; empty if this machine has neither.
std::vector<std::string> AsNobody(const std::string& binary,
                                  const std::string& filter) {
  const std::vector<std::string> self = {
      "/usr/bin/env", absl::StrCat(kUnprivilegedRun, "=1"), binary, filter};
  std::vector<std::string> command;
  for (const char* setpriv : {"/usr/bin/setpriv", "/bin/setpriv"}) {
    if (access(setpriv, X_OK) == 0) {
      command = {setpriv, "--reuid=nobody", "--regid=nogroup",
                 "--clear-groups"};
      break;
    }
  }
  for (const char* runuser : {"/usr/sbin/runuser", "/sbin/runuser"}) {
    if (command.empty() && access(runuser, X_OK) == 0) {
      command = {runuser, "-u", "nobody", "--"};
    }
  }
  if (command.empty()) return {};
  command.insert(command.end(), self.begin(), self.end());
  return command;
}

class AtomicFileTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
};

TEST_F(AtomicFileTest, WritesTheContentAndLeavesNoTemporaryFile) {
  const std::string path = dir_.Sub("m.prom");
  ASSERT_OUTBOX_OK(WriteFileAtomically(path, "a 1\n"));
  EXPECT_EQ(Read(path), "a 1\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0044, 0044u);  // a scraper of another user reads it
}

TEST_F(AtomicFileTest, ReplacesTheOldFileWhole) {
  const std::string path = dir_.Sub("m.prom");
  ASSERT_OUTBOX_OK(WriteFileAtomically(path, std::string(10000, 'x')));
  ASSERT_OUTBOX_OK(WriteFileAtomically(path, "short\n"));
  EXPECT_EQ(Read(path), "short\n");
}

TEST_F(AtomicFileTest, FailedRenameKeepsTheOldFileAndRemovesTheTemporary) {
  // A directory where the file should be: rename() refuses to replace it.
  const std::string path = dir_.Sub("m.prom");
  std::filesystem::create_directories(path + "/inside");
  absl::Status s = WriteFileAtomically(path, "new\n");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("writing " + path));
  EXPECT_TRUE(std::filesystem::is_directory(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_F(AtomicFileTest, MissingDirectoryIsNotFound) {
  EXPECT_STATUS_CODE(WriteFileAtomically(dir_.Sub("none/m.prom"), "x"),
                     absl::StatusCode::kNotFound);
}

TEST_F(AtomicFileTest, CheckDirectoryWritableSaysWhatIsWrong) {
  EXPECT_OUTBOX_OK(CheckDirectoryWritable(dir_.path()));
  absl::Status missing = CheckDirectoryWritable(dir_.Sub("none"));
  EXPECT_STATUS_CODE(missing, absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.message()),
              HasSubstr("directory " + dir_.Sub("none") + " does not exist"));
  ASSERT_OUTBOX_OK(WriteFileAtomically(dir_.Sub("f"), "x"));
  EXPECT_STATUS_CODE(CheckDirectoryWritable(dir_.Sub("f")),
                     absl::StatusCode::kFailedPrecondition);
}

// Root may write anywhere, and CI runs as root: there this test runs itself
// again as nobody, and passes only if that run passed.
TEST_F(AtomicFileTest,
       ReadOnlyDirectoryIsPermissionDeniedToAnUnprivilegedUser) {
  if (geteuid() != 0) {
    std::filesystem::create_directories(dir_.Sub("ro"));
    ASSERT_EQ(chmod(dir_.Sub("ro").c_str(), 0555), 0);
    EXPECT_STATUS_CODE(CheckDirectoryWritable(dir_.Sub("ro")),
                       absl::StatusCode::kPermissionDenied);
    return;
  }
  // Else the run as nobody would start one more, and so on.
  ASSERT_EQ(std::getenv(kUnprivilegedRun), nullptr)
      << "still root after setpriv or runuser";
  // A copy of this binary that nobody may run: the build tree may be where
  // only root goes (a clone under /root).
  const std::string copy = dir_.Sub("atomic_file_test");
  std::filesystem::copy_file(std::filesystem::read_symlink("/proc/self/exe"),
                             copy);
  ASSERT_EQ(chmod(copy.c_str(), 0755), 0);
  ASSERT_EQ(chmod(dir_.path().c_str(), 0711), 0);
  const std::string out = dir_.Sub("nobody.out");
  const std::string err = dir_.Sub("nobody.err");
  const ::testing::TestInfo* me =
      ::testing::UnitTest::GetInstance()->current_test_info();
  const std::vector<std::string> command = AsNobody(
      copy,
      absl::StrCat("--gtest_filter=", me->test_suite_name(), ".", me->name()));
  if (command.empty()) {
    OUTBOX_SKIP_WITHOUT("unprivileged-user",
                        "neither setpriv nor runuser is installed");
  }
  auto child = ChildProcess::StartToFiles(command, out, err);
  ASSERT_OUTBOX_OK(child.status());
  (*child)->Wait(absl::Now() + absl::Seconds(60));
  const std::string output = Read(out);
  if (output.find("[  FAILED  ]") != std::string::npos) {
    ADD_FAILURE() << "as nobody:\n" << output;
  } else if (output.find("[  PASSED  ] 1 test.") == std::string::npos ||
             output.find("[  SKIPPED ]") != std::string::npos) {
    const std::string why = absl::StrCat("this test could not run as nobody (",
                                         command[0], "): ", output, Read(err));
    OUTBOX_SKIP_WITHOUT("unprivileged-user", why);
  }
}

}  // namespace
}  // namespace outbox
