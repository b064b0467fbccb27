// Copyright (c) edge-outbox authors.
//
// Store::Open refuses what is not a store it can safely use, with an error
// that says what to do.

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/codec.h"
#include "lib/keys.h"
#include "outbox/store.h"
#include "proto/storage.pb.h"
#include "rocksdb/db.h"
#include "tests/testing/events.h"
#include "tests/testing/raw_store.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

Options SalesOptions() {
  Options o;
  o.tables = {"sales"};
  return o;
}

std::string MessageOf(const absl::Status& s) {
  return std::string(s.message());
}

TEST(StoreOpenTest, CreatesMissingDirectory) {
  testing::TempDir dir;
  auto store = Store::Open(SalesOptions(), dir.Sub("new/db"));
  ASSERT_OUTBOX_OK(store);
}

TEST(StoreOpenTest, MissingStoreIsNotFoundWithoutCreateIfMissing) {
  testing::TempDir dir;
  Options o = SalesOptions();
  o.create_if_missing = false;
  EXPECT_STATUS_CODE(Store::Open(o, dir.Sub("db")),
                     absl::StatusCode::kNotFound);
}

TEST(StoreOpenTest, RefusesRegularFile) {
  testing::TempDir dir;
  std::ofstream(dir.Sub("file")) << "hello";
  auto store = Store::Open(SalesOptions(), dir.Sub("file"));
  EXPECT_STATUS_CODE(store, absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(MessageOf(store.status()), HasSubstr("not a directory"));
}

TEST(StoreOpenTest, RefusesDirectoryWithOtherFiles) {
  testing::TempDir dir;
  std::ofstream(dir.Sub("notes.txt")) << "my files";
  auto store = Store::Open(SalesOptions(), dir.path());
  EXPECT_STATUS_CODE(store, absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(MessageOf(store.status()), HasSubstr("not an outbox store"));
}

TEST(StoreOpenTest, RefusesPlainRocksDbWithData) {
  testing::TempDir dir;
  rocksdb::Options o;
  o.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(o, dir.Sub("db"), &raw).ok());
  ASSERT_TRUE(raw->Put(rocksdb::WriteOptions(), "someone's", "data").ok());
  delete raw;
  auto store = Store::Open(SalesOptions(), dir.Sub("db"));
  EXPECT_STATUS_CODE(store, absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(MessageOf(store.status()), HasSubstr("not an outbox store"));
}

// A first Store::Open killed after RocksDB wrote CURRENT but before the
// store's column families existed leaves an empty database: finish it.
TEST(StoreOpenTest, FinishesCreationCutOffAfterCurrent) {
  testing::TempDir dir;
  rocksdb::Options o;
  o.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(o, dir.Sub("db"), &raw).ok());
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  ASSERT_TRUE(raw->CreateColumnFamily(rocksdb::ColumnFamilyOptions(),
                                      keys::kMetaFamily, &meta)
                  .ok());
  ASSERT_TRUE(raw->DestroyColumnFamilyHandle(meta).ok());
  delete raw;
  auto store = Store::Open(SalesOptions(), dir.Sub("db"));
  ASSERT_OUTBOX_OK(store);
  Txn txn;
  txn.Emit(testing::MakeEvent("t"));
  EXPECT_OUTBOX_OK((*store)->Commit(txn));
}

// Killed before CURRENT: only RocksDB's first files are there.
TEST(StoreOpenTest, FinishesCreationCutOffBeforeCurrent) {
  testing::TempDir dir;
  ASSERT_EQ(mkdir(dir.Sub("db").c_str(), 0755), 0);
  for (const char* leftover :
       {"IDENTITY", "LOCK", "LOG", "MANIFEST-000001", "000001.dbtmp"}) {
    std::ofstream(dir.Sub("db") + "/" + leftover) << "partial";
  }
  std::ofstream(dir.Sub("db/000003.log"));  // empty
  ASSERT_OUTBOX_OK(Store::Open(SalesOptions(), dir.Sub("db")));
}

TEST(StoreOpenTest, DataBesideRocksDbLeftoversIsNotTakenForACutOffCreate) {
  testing::TempDir dir;
  ASSERT_EQ(mkdir(dir.Sub("db").c_str(), 0755), 0);
  std::ofstream(dir.Sub("db/MANIFEST-000001")) << "partial";
  std::ofstream(dir.Sub("db/000007.sst")) << "a table file";
  EXPECT_STATUS_CODE(Store::Open(SalesOptions(), dir.Sub("db")),
                     absl::StatusCode::kFailedPrecondition);
}

TEST(StoreOpenTest, RefusesTableMissingFromOptions) {
  testing::TempDir dir;
  ASSERT_OUTBOX_OK(Store::Open(SalesOptions(), dir.Sub("db")));
  auto store = Store::Open(Options(), dir.Sub("db"));
  EXPECT_STATUS_CODE(store, absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(MessageOf(store.status()), HasSubstr("'sales'"));
}

TEST(StoreOpenTest, AddsNewTableToExistingStore) {
  testing::TempDir dir;
  ASSERT_OUTBOX_OK(Store::Open(SalesOptions(), dir.Sub("db")));
  Options o = SalesOptions();
  o.tables.push_back("bookings");
  auto store = Store::Open(o, dir.Sub("db"));
  ASSERT_OUTBOX_OK(store);
  Txn txn;
  txn.Put("bookings", "b1", "x");
  ASSERT_OUTBOX_OK((*store)->Commit(txn));
}

TEST(StoreOpenTest, RejectsBadTableNames) {
  testing::TempDir dir;
  for (const char* bad :
       {"", "default", "outbox.pending", "has space", "dup"}) {
    Options o;
    o.tables = {bad};
    if (std::string(bad) == "dup") o.tables = {"dup", "dup"};
    EXPECT_STATUS_CODE(Store::Open(o, dir.Sub("db")),
                       absl::StatusCode::kInvalidArgument)
        << "table name '" << bad << "'";
  }
}

TEST(StoreOpenTest, SecondOpenOfSameStoreIsUnavailable) {
  testing::TempDir dir;
  auto first = Store::Open(SalesOptions(), dir.Sub("db"));
  ASSERT_OUTBOX_OK(first);
  auto second = Store::Open(SalesOptions(), dir.Sub("db"));
  EXPECT_STATUS_CODE(second, absl::StatusCode::kUnavailable);
}

// Rewrites the manifest of the (closed) store at `path` with `edit`.
void EditManifest(const std::string& path,
                  const std::function<void(storage::StoreManifest*)>& edit,
                  const std::vector<std::string>& drop_families = {}) {
  testing::RawEdit(path, [&](rocksdb::DB* db,
                             const testing::RawFamilies& families) {
    rocksdb::ColumnFamilyHandle* meta = families.at(keys::kMetaFamily);
    std::string value;
    ASSERT_TRUE(
        db->Get(rocksdb::ReadOptions(), meta, keys::kManifestKey, &value).ok());
    storage::StoreManifest manifest;
    ASSERT_TRUE(manifest.ParseFromString(value));
    edit(&manifest);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), meta, keys::kManifestKey,
                        manifest.SerializeAsString())
                    .ok());
    for (const std::string& drop : drop_families) {
      ASSERT_TRUE(db->DropColumnFamily(families.at(drop)).ok());
    }
  });
}

TEST(StoreOpenTest, RefusesNewerSchemaVersion) {
  testing::TempDir dir;
  ASSERT_OUTBOX_OK(Store::Open(SalesOptions(), dir.Sub("db")));
  EditManifest(dir.Sub("db"),
               [](storage::StoreManifest* m) { m->set_schema_version(99); });
  auto store = Store::Open(SalesOptions(), dir.Sub("db"));
  EXPECT_STATUS_CODE(store, absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(MessageOf(store.status()), HasSubstr("schema version 99"));
}

TEST(StoreOpenTest, TableThatDisappearedIsDataLoss) {
  testing::TempDir dir;
  {
    auto store = Store::Open(SalesOptions(), dir.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    Txn txn;
    txn.Put("sales", "s1", "x");
    ASSERT_OUTBOX_OK((*store)->Commit(txn));
  }
  EditManifest(dir.Sub("db"), [](storage::StoreManifest*) {}, {"sales"});
  auto store = Store::Open(SalesOptions(), dir.Sub("db"));
  EXPECT_STATUS_CODE(store, absl::StatusCode::kDataLoss);
  EXPECT_THAT(MessageOf(store.status()), HasSubstr("'sales'"));
}

TEST(StoreOpenTest, LostOwnColumnFamilyIsDataLoss) {
  testing::TempDir dir;
  ASSERT_OUTBOX_OK(Store::Open(SalesOptions(), dir.Sub("db")));
  EditManifest(dir.Sub("db"), [](storage::StoreManifest*) {},
               {keys::kPendingFamily});
  EXPECT_STATUS_CODE(Store::Open(SalesOptions(), dir.Sub("db")),
                     absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace outbox

namespace outbox {
namespace {

TEST(StoreReadOnlyTest, ReadsBesideAWriterAndRefusesWrites) {
  testing::TempDir dir;
  auto writer = Store::Open(SalesOptions(), dir.Sub("db"));
  ASSERT_OUTBOX_OK(writer);
  Txn txn;
  txn.Put("sales", "s1", "12.50");
  const std::string id = txn.Emit(testing::MakeEvent("sale.created"));
  ASSERT_OUTBOX_OK((*writer)->Commit(txn));

  auto reader = Store::OpenReadOnly(Options(), dir.Sub("db"));
  ASSERT_OUTBOX_OK(reader);
  auto record = (*reader)->Get("sales", "s1");  // no Options::tables needed
  ASSERT_OUTBOX_OK(record);
  EXPECT_EQ(*record, "12.50");
  auto pending = (*reader)->ListPending(10);
  ASSERT_OUTBOX_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].id, id);
  EXPECT_STATUS_CODE((*reader)->MarkDelivered((*pending)[0]),
                     absl::StatusCode::kFailedPrecondition);
  Txn more;
  more.Emit(testing::MakeEvent("t"));
  EXPECT_STATUS_CODE((*reader)->Commit(more),
                     absl::StatusCode::kFailedPrecondition);
  // The writer is unaffected.
  ASSERT_OUTBOX_OK((*writer)->Commit(more));
}

TEST(StoreReadOnlyTest, MissingStoreIsNotFound) {
  testing::TempDir dir;
  EXPECT_STATUS_CODE(Store::OpenReadOnly(Options(), dir.Sub("db")),
                     absl::StatusCode::kNotFound);
}

TEST(StoreListTablesTest, ListsRecordTablesOnly) {
  testing::TempDir dir;
  Options o = SalesOptions();
  o.tables.push_back("bookings");
  ASSERT_OUTBOX_OK(Store::Open(o, dir.Sub("db")));
  auto tables = Store::ListTables(dir.Sub("db"));
  ASSERT_OUTBOX_OK(tables);
  std::sort(tables->begin(), tables->end());
  EXPECT_EQ(*tables, (std::vector<std::string>{"bookings", "sales"}));
  EXPECT_STATUS_CODE(Store::ListTables(dir.Sub("nope")),
                     absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace outbox
