// Copyright (c) edge-outbox authors.

#include "platform/files.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class FilesTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& content,
                    mode_t mode = 0600) {
    const std::string path = dir_.Sub(name);
    std::ofstream(path, std::ios::binary) << content;
    EXPECT_EQ(chmod(path.c_str(), mode), 0);
    return path;
  }

  static ReadFileOptions Secrets() {
    ReadFileOptions o;
    o.what = "secrets file";
    o.require_private = true;
    return o;
  }

  testing::TempDir dir_;
};

TEST_F(FilesTest, ReadsTheWholeFile) {
  const std::string content(10000, 'x');
  absl::StatusOr<std::string> read =
      ReadFileChecked(Write("f", content), ReadFileOptions());
  ASSERT_OUTBOX_OK(read);
  EXPECT_EQ(*read, content);
}

TEST_F(FilesTest, MissingFileIsNotFoundAndSaysSo) {
  absl::StatusOr<std::string> read =
      ReadFileChecked(dir_.Sub("none"), Secrets());
  ASSERT_STATUS_CODE(read, absl::StatusCode::kNotFound);
  EXPECT_EQ(read.status().message(),
            "secrets file " + dir_.Sub("none") + " does not exist");
}

TEST_F(FilesTest, FifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(mkfifo(dir_.Sub("fifo").c_str(), 0600), 0);
  absl::StatusOr<std::string> read =
      ReadFileChecked(dir_.Sub("fifo"), ReadFileOptions());
  ASSERT_STATUS_CODE(read, absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(read.status().message(), HasSubstr("is not a regular file"));
  EXPECT_STATUS_CODE(CheckFileReadable(dir_.Sub("fifo"), ReadFileOptions()),
                     absl::StatusCode::kFailedPrecondition);
}

TEST_F(FilesTest, DirectoryIsNotAFile) {
  std::filesystem::create_directories(dir_.Sub("d"));
  absl::StatusOr<std::string> read =
      ReadFileChecked(dir_.Sub("d"), ReadFileOptions());
  ASSERT_STATUS_CODE(read, absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(read.status().message(),
            "file " + dir_.Sub("d") + " is not a regular file");
}

TEST_F(FilesTest, PrivateFileThatOthersCanReachIsRefusedWithTheChmod) {
  for (mode_t mode : {0640, 0604, 0620}) {
    const std::string path = Write("s", "secret", mode);
    absl::StatusOr<std::string> read = ReadFileChecked(path, Secrets());
    ASSERT_STATUS_CODE(read, absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(read.status().message(), HasSubstr("run: chmod 600 " + path));
  }
  EXPECT_OUTBOX_OK(ReadFileChecked(Write("s", "secret", 0400), Secrets()));
}

TEST_F(FilesTest, FileNotRequiredPrivateMayBeReadableByOthers) {
  EXPECT_OUTBOX_OK(ReadFileChecked(Write("f", "x", 0644), ReadFileOptions()));
}

TEST_F(FilesTest, HiddenPathIsNeverNamed) {
  ReadFileOptions options = Secrets();
  options.what = "value file";
  options.show_path = false;
  const std::string path = Write("tok-s3cr3t", "v", 0644);
  for (const std::string& p : {path, dir_.Sub("missing-s3cr3t")}) {
    absl::StatusOr<std::string> read = ReadFileChecked(p, options);
    ASSERT_FALSE(read.ok());
    EXPECT_THAT(read.status().message(), Not(HasSubstr("s3cr3t")));
    EXPECT_THAT(read.status().message(), HasSubstr("value file"));
  }
  EXPECT_THAT(ReadFileChecked(path, options).status().message(),
              HasSubstr("run chmod 600 on the file"));
}

TEST_F(FilesTest, FileLargerThanTheLimitIsRefused) {
  ReadFileOptions options;
  options.max_bytes = 2048;
  EXPECT_OUTBOX_OK(
      ReadFileChecked(Write("fits", std::string(2048, 'a')), options));
  absl::StatusOr<std::string> read =
      ReadFileChecked(Write("big", std::string(2049, 'a')), options);
  ASSERT_STATUS_CODE(read, absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read.status().message(), HasSubstr("is larger than 2 KiB"));
}

TEST_F(FilesTest, UnreadableFileIsPermissionDenied) {
  const std::string path = Write("f", "x", 0200);
  if (geteuid() != 0) {
    EXPECT_STATUS_CODE(ReadFileChecked(path, ReadFileOptions()),
                       absl::StatusCode::kPermissionDenied);
    return;
  }
  // Root reads any file (CI runs as root): read it as nobody instead, in a
  // child process, which reports the status code as its exit code.
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (setresgid(65534, 65534, 65534) != 0 ||
        setresuid(65534, 65534, 65534) != 0) {
      _exit(100);
    }
    _exit(static_cast<int>(
        ReadFileChecked(path, ReadFileOptions()).status().code()));
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus));
  ASSERT_NE(WEXITSTATUS(wstatus), 100) << "could not become nobody";
  EXPECT_EQ(WEXITSTATUS(wstatus),
            static_cast<int>(absl::StatusCode::kPermissionDenied));
}

TEST_F(FilesTest, CheckFileReadableAppliesTheSameRules) {
  EXPECT_OUTBOX_OK(CheckFileReadable(Write("ok", "x"), Secrets()));
  EXPECT_STATUS_CODE(CheckFileReadable(Write("open", "x", 0644), Secrets()),
                     absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(CheckFileReadable(dir_.Sub("none"), Secrets()),
                     absl::StatusCode::kNotFound);
}

TEST_F(FilesTest, CheckDirectoryReadableWantsADirectory) {
  std::filesystem::create_directories(dir_.Sub("d"));
  EXPECT_OUTBOX_OK(CheckDirectoryReadable(dir_.Sub("d"), ReadFileOptions()));
  EXPECT_STATUS_CODE(CheckDirectoryReadable(Write("f", "x"), ReadFileOptions()),
                     absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(
      CheckDirectoryReadable(dir_.Sub("none"), ReadFileOptions()),
      absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace outbox
