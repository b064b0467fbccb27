// Copyright (c) edge-outbox authors.
//
// A store from the future: its manifest lists a feature this library does
// not know, as a newer firmware would leave it before a rollback.
// Invariant: an incompatible one is refused by every open, a read-only-
// compatible one by a writable open, with kFailedPrecondition naming the
// feature and the version that wrote it, and every file of the store is
// byte for byte what it was (compared whole, file by file, names included).

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/keys.h"
#include "lib/schema.h"
#include "outbox/store.h"
#include "proto/storage.pb.h"
#include "tests/testing/events.h"
#include "tests/testing/raw_store.h"
#include "tests/testing/status.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;
using testing::MakeEvent;

class FutureStoreTest : public testing::StoreTest {
 protected:
  // Commits `n` events, closes the store and plants `feature` in the set
  // `set` of its manifest, as edge-outbox 9.1.0 would have written it.
  void PlantFeature(const char* set, const std::string& feature, int n = 3) {
    for (int i = 0; i < n; ++i) CommitEvent(MakeEvent("sale.created"));
    ASSERT_OUTBOX_OK(store_->Close());
    store_.reset();
    testing::RawEdit(
        path(), [&](rocksdb::DB* db, const testing::RawFamilies& families) {
          rocksdb::ColumnFamilyHandle* meta = families.at(keys::kMetaFamily);
          std::string value;
          ASSERT_TRUE(
              db->Get(rocksdb::ReadOptions(), meta, keys::kManifestKey, &value)
                  .ok());
          storage::StoreManifest manifest;
          ASSERT_TRUE(manifest.ParseFromString(value));
          storage::StoreFeature* f = std::string(set) == "incompat"
                                         ? manifest.add_incompat_features()
                                     : std::string(set) == "ro_compat"
                                         ? manifest.add_ro_compat_features()
                                         : manifest.add_compat_features();
          f->set_name(feature);
          f->set_written_by("edge-outbox 9.1.0");
          rocksdb::WriteOptions wo;
          wo.sync = true;
          ASSERT_TRUE(db->Put(wo, meta, keys::kManifestKey,
                              manifest.SerializeAsString())
                          .ok());
        });
    before_ = testing::FileContents(path());
    ASSERT_FALSE(before_.empty());
  }

  // Every file as PlantFeature left it: same names, same bytes.
  void ExpectUnchanged() {
    const std::map<std::string, std::string> after =
        testing::FileContents(path());
    for (const auto& [name, bytes] : before_) {
      auto it = after.find(name);
      if (it == after.end()) {
        ADD_FAILURE() << name << " disappeared";
      } else if (it->second != bytes) {
        ADD_FAILURE() << name << " changed (" << bytes.size() << " -> "
                      << it->second.size() << " bytes)";
      }
    }
    for (const auto& [name, bytes] : after) {
      if (before_.count(name) == 0) ADD_FAILURE() << name << " appeared";
    }
  }

  std::map<std::string, std::string> before_;
};

TEST_F(FutureStoreTest, IncompatibleFeatureRefusesWritableOpenUnchanged) {
  PlantFeature("incompat", "sharded_queue");
  auto store = Store::Open(options_, path());
  ASSERT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition)
      << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("'sharded_queue'"));
  EXPECT_THAT(store.status().message(), HasSubstr("edge-outbox 9.1.0"));
  ExpectUnchanged();
}

TEST_F(FutureStoreTest, IncompatibleFeatureRefusesReadOnlyOpenUnchanged) {
  PlantFeature("incompat", "sharded_queue");
  auto store = Store::OpenReadOnly(options_, path());
  ASSERT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition)
      << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("'sharded_queue'"));
  ExpectUnchanged();
}

TEST_F(FutureStoreTest, ReadOnlyCompatibleFeatureOpensOnlyForReading) {
  PlantFeature("ro_compat", "dead_letter_index", 4);
  auto writer = Store::Open(options_, path());
  ASSERT_EQ(writer.status().code(), absl::StatusCode::kFailedPrecondition)
      << writer.status();
  EXPECT_THAT(writer.status().message(), HasSubstr("open it read-only"));
  EXPECT_THAT(writer.status().message(), HasSubstr("'dead_letter_index'"));
  ExpectUnchanged();
  auto reader = Store::OpenReadOnly(options_, path());
  ASSERT_OUTBOX_OK(reader);
  auto pending = (*reader)->ListPending(100);
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(pending->size(), 4u);
  auto report = (*reader)->Verify();
  ASSERT_OUTBOX_OK(report);
  EXPECT_TRUE(report->problems.empty());
  EXPECT_THAT(report->features,
              ::testing::Contains(HasSubstr("ro_compat:dead_letter_index")));
  ASSERT_OUTBOX_OK((*reader)->Close());
  ExpectUnchanged();
}

TEST_F(FutureStoreTest, NewerSchemaVersionIsRefusedUnchanged) {
  PlantFeature("compat", "anything");
  testing::RawEdit(
      path(), [&](rocksdb::DB* db, const testing::RawFamilies& families) {
        storage::StoreManifest manifest;
        manifest.set_schema_version(kSchemaVersion + 1);
        manifest.set_created_by("edge-outbox 9.1.0");
        rocksdb::WriteOptions wo;
        wo.sync = true;
        ASSERT_TRUE(db->Put(wo, families.at(keys::kMetaFamily),
                            keys::kManifestKey, manifest.SerializeAsString())
                        .ok());
      });
  before_ = testing::FileContents(path());
  auto store = Store::Open(options_, path());
  ASSERT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition)
      << store.status();
  EXPECT_THAT(store.status().message(),
              HasSubstr(absl::StrCat("schema version ", kSchemaVersion + 1)));
  ExpectUnchanged();
}

TEST_F(FutureStoreTest, UnknownCompatibleFeatureOpensAndDelivers) {
  PlantFeature("compat", "size_hint", 2);
  auto store = Store::Open(options_, path());
  ASSERT_OUTBOX_OK(store);
  auto due = (*store)->NextDue(10);
  ASSERT_OUTBOX_OK(due);
  ASSERT_EQ(due->events.size(), 2u);
  ASSERT_OUTBOX_OK((*store)->MarkDelivered(due->events[0]));
  ASSERT_OUTBOX_OK((*store)->Close());
  store->reset();
  auto reopened = Store::Open(options_, path());
  ASSERT_OUTBOX_OK(reopened);
  auto stats = (*reopened)->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 1u);
  EXPECT_EQ(stats->delivered_total, 1u);
}

}  // namespace
}  // namespace outbox
