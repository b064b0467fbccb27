// Copyright (c) edge-outbox authors.

#include "platform/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
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
  if (geteuid() != 0) {  // root may write anywhere
    std::filesystem::create_directories(dir_.Sub("ro"));
    ASSERT_EQ(chmod(dir_.Sub("ro").c_str(), 0555), 0);
    EXPECT_STATUS_CODE(CheckDirectoryWritable(dir_.Sub("ro")),
                       absl::StatusCode::kPermissionDenied);
  }
}

}  // namespace
}  // namespace outbox
