// Copyright (c) edge-outbox authors.

#include "lib/rocks_status.h"

#include "gtest/gtest.h"

namespace outbox {
namespace {

TEST(FromRocksTest, OkStaysOk) {
  EXPECT_TRUE(FromRocks(rocksdb::Status::OK(), "x").ok());
}

TEST(FromRocksTest, DiskFullIsResourceExhausted) {
  absl::Status s = FromRocks(rocksdb::Status::NoSpace("disk full"), "commit");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("commit"), absl::string_view::npos);
}

TEST(FromRocksTest, CorruptionIsDataLoss) {
  EXPECT_EQ(FromRocks(rocksdb::Status::Corruption("bad block"), "x").code(),
            absl::StatusCode::kDataLoss);
}

TEST(FromRocksTest, TransientErrorsAreUnavailable) {
  EXPECT_EQ(FromRocks(rocksdb::Status::Busy(), "x").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(FromRocks(rocksdb::Status::TryAgain(), "x").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(FromRocks(rocksdb::Status::IOError("EIO"), "x").code(),
            absl::StatusCode::kUnavailable);
}

TEST(FromRocksTest, HeldLockNamesTheLikelyHolder) {
  absl::Status s =
      FromRocks(rocksdb::Status::IOError("While lock file: /d/LOCK",
                                         "Resource temporarily unavailable"),
                "open");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("another process"), absl::string_view::npos);
}

TEST(FromRocksTest, BadArgumentsAndMissingThingsKeepTheirMeaning) {
  EXPECT_EQ(FromRocks(rocksdb::Status::InvalidArgument("x"), "y").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FromRocks(rocksdb::Status::NotFound("x"), "y").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(FromRocks(rocksdb::Status::NotSupported("x"), "y").code(),
            absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace outbox
