// Copyright (c) edge-outbox authors.
//
// A store's directory is private to its owner: created 0700 whatever the
// umask, and refused, by writers and readers alike, when group or others can
// reach it (its files inside are as readable as the umask made them).

#include <sys/stat.h>

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "tests/testing/events.h"
#include "tests/testing/file_mode.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

using testing::ModeOf;
using testing::ScopedUmask;

Options SalesOptions() {
  Options o;
  o.tables = {"sales"};
  return o;
}

TEST(StoreModeTest, NewStoreDirectoryIs0700EvenUnderUmask000) {
  testing::TempDir dir;
  ScopedUmask scoped(000);
  ASSERT_OUTBOX_OK(Store::Open(SalesOptions(), dir.Sub("new/db")));
  EXPECT_EQ(ModeOf(dir.Sub("new/db")), 0700u);
}

TEST(StoreModeTest, EmptyDirectoryGivenForANewStoreIsMade0700) {
  testing::TempDir dir;
  ASSERT_EQ(mkdir(dir.Sub("db").c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir.Sub("db").c_str(), 0777), 0);
  ASSERT_OUTBOX_OK(Store::Open(SalesOptions(), dir.Sub("db")));
  EXPECT_EQ(ModeOf(dir.Sub("db")), 0700u);
}

TEST(StoreModeTest, StoreOthersCanReachIsRefusedWithTheChmodAndKeepsItsEvents) {
  testing::TempDir dir;
  const std::string db = dir.Sub("db");
  {
    auto store = Store::Open(SalesOptions(), db);
    ASSERT_OUTBOX_OK(store);
    Txn txn;
    txn.Emit(testing::MakeEvent("t"));
    ASSERT_OUTBOX_OK((*store)->Commit(txn));
    ASSERT_OUTBOX_OK((*store)->Close());
  }
  for (mode_t mode : {0755, 0701, 0720}) {
    ASSERT_EQ(chmod(db.c_str(), mode), 0);
    auto writer = Store::Open(SalesOptions(), db);
    EXPECT_STATUS_CODE(writer, absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(writer.status().message(), HasSubstr("chmod 700 '" + db + "'"));
    auto reader = Store::OpenReadOnly(SalesOptions(), db);
    EXPECT_STATUS_CODE(reader, absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(ModeOf(db), static_cast<unsigned>(mode)) << "left as it was";
  }
  ASSERT_EQ(chmod(db.c_str(), 0700), 0);
  auto store = Store::Open(SalesOptions(), db);
  ASSERT_OUTBOX_OK(store);
  auto pending = (*store)->ListPending(10);
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(pending->size(), 1u);
}

}  // namespace
}  // namespace outbox
