// Copyright (c) edge-outbox authors.

#include "platform/private_dir.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/file_mode.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

// Sets the process's umask for one test; restores it after.
using testing::ModeOf;
using testing::ScopedUmask;

TEST(PrivateDirTest, NewDirectoryIs0700UnderAnyUmask) {
  testing::TempDir dir;
  for (mode_t mask : {000, 022, 077, 0277}) {
    ScopedUmask scoped(mask);
    const std::string path = dir.Sub("d" + std::to_string(mask));
    ASSERT_OUTBOX_OK(MakePrivateDirectory(path));
    EXPECT_EQ(ModeOf(path), 0700u) << "umask " << mask;
  }
}

TEST(PrivateDirTest, ExistingDirectoryIsMade0700) {
  testing::TempDir dir;
  const std::string path = dir.Sub("d");
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  ASSERT_EQ(chmod(path.c_str(), 0777), 0);
  ASSERT_OUTBOX_OK(MakePrivateDirectory(path));
  EXPECT_EQ(ModeOf(path), 0700u);
}

TEST(PrivateDirTest, AFileIsNotADirectory) {
  testing::TempDir dir;
  const std::string path = dir.Sub("f");
  std::ofstream(path) << "x";
  absl::Status s = MakePrivateDirectory(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("is not a directory"));
  EXPECT_STATUS_CODE(DirectoryMode(path),
                     absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(DirectoryMode(dir.Sub("missing")),
                     absl::StatusCode::kNotFound);
}

TEST(PrivateDirTest, OwnerOnlyModesPass) {
  testing::TempDir dir;
  const std::string path = dir.Sub("d");
  ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
  for (mode_t mode : {0700, 0500}) {
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
    EXPECT_OUTBOX_OK(CheckDirectoryPrivate(path, "outbox store"));
    absl::StatusOr<unsigned> got = DirectoryMode(path);
    ASSERT_OUTBOX_OK(got);
    EXPECT_EQ(*got, static_cast<unsigned>(mode));
  }
}

TEST(PrivateDirTest, AnyGroupOrOtherAccessIsRefusedWithTheChmod) {
  testing::TempDir dir;
  const std::string path = dir.Sub("d");
  ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
  for (mode_t mode : {0755, 0750, 0701, 0710, 0702, 0720}) {
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
    absl::Status s = CheckDirectoryPrivate(path, "outbox store");
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(s.message(), HasSubstr("chmod 700 '" + path + "'"));
    char octal[8];
    std::snprintf(octal, sizeof(octal), "%04o", mode);
    EXPECT_THAT(s.message(), HasSubstr(octal));
    EXPECT_THAT(s.message(), HasSubstr("outbox store '" + path + "'"));
  }
}

}  // namespace
}  // namespace outbox
