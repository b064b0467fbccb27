// Copyright (c) edge-outbox authors.
//
// The store's feature sets: a feature is recorded by the batch that first
// uses it and not before (a store that never ran a workflow stays without
// `workflows`), a store written before the sets existed gets the features
// it uses at its next writable open, and the manifest keeps features this
// library does not know.

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/features.h"
#include "lib/keys.h"
#include "lib/schema.h"
#include "proto/storage.pb.h"
#include "tests/testing/events.h"
#include "tests/testing/raw_store.h"
#include "tests/testing/status.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using testing::MakeEvent;

class StoreFeaturesTest : public testing::StoreTest {
 protected:
  // The stored manifest, read with plain RocksDB after closing the store.
  storage::StoreManifest StoredManifest() {
    if (store_ != nullptr) {
      EXPECT_OUTBOX_OK(store_->Close());
    }
    store_.reset();
    storage::StoreManifest manifest;
    testing::RawEdit(
        path(), [&](rocksdb::DB* db, const testing::RawFamilies& families) {
          std::string value;
          ASSERT_TRUE(db->Get(rocksdb::ReadOptions(),
                              families.at(keys::kMetaFamily),
                              keys::kManifestKey, &value)
                          .ok());
          ASSERT_TRUE(manifest.ParseFromString(value));
        });
    return manifest;
  }

  void WriteManifest(const storage::StoreManifest& manifest) {
    testing::RawEdit(
        path(), [&](rocksdb::DB* db, const testing::RawFamilies& families) {
          rocksdb::WriteOptions wo;
          wo.sync = true;
          ASSERT_TRUE(db->Put(wo, families.at(keys::kMetaFamily),
                              keys::kManifestKey, manifest.SerializeAsString())
                          .ok());
        });
  }

  // Settles `id` as a finished workflow step: writes its state (as rows
  // when `rows`).
  void StepDone(const std::string& id, bool rows = false) {
    storage::WorkflowState state;
    state.set_rows(rows);
    state.set_phase(storage::WORKFLOW_PHASE_FORWARD);
    state.set_next_step(1);
    state.add_steps()->set_name("reserve");
    Settlement s;
    s.kind = Settlement::Kind::kStepDone;
    s.event = DueWithId(id);
    s.workflow_state = state.SerializeAsString();
    auto settled = store_->Settle({s});
    ASSERT_OUTBOX_OK(settled);
    ASSERT_EQ(settled->applied, 1u);
    ASSERT_OUTBOX_OK(store_->Sync());
  }
};

TEST_F(StoreFeaturesTest, StoreWithoutWorkflowsRecordsNoFeature) {
  const std::string id = CommitEvent(MakeEvent("sale.created"));
  ASSERT_OUTBOX_OK(store_->MarkDelivered(DueWithId(id)));
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(
      DueWithId(CommitEvent(MakeEvent("sale.created"))), "rejected"));
  Reopen();
  const storage::StoreManifest manifest = StoredManifest();
  EXPECT_EQ(manifest.incompat_features_size(), 0);
  EXPECT_EQ(manifest.ro_compat_features_size(), 0);
  EXPECT_EQ(manifest.compat_features_size(), 0);
  EXPECT_EQ(manifest.schema_version(), 1u);
}

TEST_F(StoreFeaturesTest, FirstWorkflowWriteRecordsWorkflowsInItsBatch) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  EXPECT_FALSE(features::Has(StoredManifest(), features::kWorkflows));
  Reopen();
  StepDone(id);
  // Closed right after the settling write, without any other write: the
  // feature can only have come with the workflow's own batch.
  const storage::StoreManifest manifest = StoredManifest();
  ASSERT_EQ(manifest.incompat_features_size(), 1);
  EXPECT_EQ(manifest.incompat_features(0).name(), "workflows");
  EXPECT_EQ(manifest.incompat_features(0).written_by(), kLibraryVersion);
  Reopen();
  EXPECT_OUTBOX_OK(store_->GetWorkflow(id));
}

TEST_F(StoreFeaturesTest, TablesAddedAtOpenSurviveTheFeatureWrite) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  options_.tables.push_back("refunds");
  Reopen();      // records "refunds" in the manifest
  StepDone(id);  // rewrites the manifest with the feature
  const storage::StoreManifest manifest = StoredManifest();
  EXPECT_TRUE(features::Has(manifest, features::kWorkflows));
  ASSERT_EQ(manifest.tables_size(), 2);
  EXPECT_EQ(manifest.tables(1), "refunds");
}

TEST_F(StoreFeaturesTest, CancelOfAnEventRecordsWorkflows) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  Txn txn;
  txn.Put("sales", "sale-1", "cancelled");
  txn.Cancel(id, "customer left");
  ASSERT_OUTBOX_OK(store_->Commit(txn));
  EXPECT_TRUE(features::Has(StoredManifest(), features::kWorkflows));
}

TEST_F(StoreFeaturesTest, WorkflowRowsWithoutTheFeatureGetItAtWritableOpen) {
  StepDone(CommitEvent(MakeEvent("order.created")));
  // As a store written before the feature sets existed: rows, no feature.
  storage::StoreManifest legacy = StoredManifest();
  legacy.clear_incompat_features();
  WriteManifest(legacy);
  auto reader = Store::OpenReadOnly(options_, path());
  ASSERT_OUTBOX_OK(reader);
  reader->reset();  // a reader records nothing
  EXPECT_FALSE(features::Has(StoredManifest(), features::kWorkflows));
  Reopen();
  EXPECT_TRUE(features::Has(StoredManifest(), features::kWorkflows));
}

TEST_F(StoreFeaturesTest, UnknownCompatFeatureIsKeptAcrossManifestWrites) {
  storage::StoreManifest manifest = StoredManifest();
  storage::StoreFeature* future = manifest.add_compat_features();
  future->set_name("future_hint");
  future->set_written_by("edge-outbox 9.0.0");
  WriteManifest(manifest);
  // Adding a table rewrites the manifest; the unknown feature stays.
  options_.tables.push_back("refunds");
  Reopen();
  CommitEvent(MakeEvent("sale.created"));
  manifest = StoredManifest();
  ASSERT_EQ(manifest.compat_features_size(), 1);
  EXPECT_EQ(manifest.compat_features(0).name(), "future_hint");
  EXPECT_EQ(manifest.tables_size(), 2);
}

}  // namespace
}  // namespace outbox

namespace outbox {
namespace {

// A build with feature sets from before workflow_rows: schema version 1,
// knows `workflows` only (main at 65668e3).
bool KnownBeforeRows(features::Kind kind, absl::string_view name) {
  return kind == features::Kind::kIncompat && name == features::kWorkflows;
}

TEST_F(StoreFeaturesTest, AStateWrittenWholeKeepsSchemaOneAndNoRowsFeature) {
  StepDone(CommitEvent(MakeEvent("order.created")));
  const storage::StoreManifest manifest = StoredManifest();
  EXPECT_FALSE(features::Has(manifest, features::kWorkflowRows));
  EXPECT_EQ(manifest.schema_version(), 1u);
  // So the build before this one (and one rollback further) still opens it.
  EXPECT_OUTBOX_OK(
      features::CheckOpenableAs(manifest, path(), true, 1, KnownBeforeRows));
}

TEST_F(StoreFeaturesTest, FirstRowsWriteRecordsWorkflowRowsAndSchemaTwo) {
  const std::string id = CommitEvent(MakeEvent("order.created"));
  StepDone(id);  // as a state stored whole: workflows only
  EXPECT_FALSE(features::Has(StoredManifest(), features::kWorkflowRows));
  Reopen();
  StepDone(id, /*rows=*/true);
  // Closed right after the settling write: the batch recorded both.
  const storage::StoreManifest manifest = StoredManifest();
  ASSERT_EQ(manifest.incompat_features_size(), 2);
  EXPECT_EQ(manifest.incompat_features(1).name(), "workflow_rows");
  EXPECT_EQ(manifest.incompat_features(1).written_by(), kLibraryVersion);
  EXPECT_EQ(manifest.schema_version(), 2u);
  Reopen();
  EXPECT_OUTBOX_OK(store_->GetWorkflow(id));
}

TEST_F(StoreFeaturesTest, BuildsThatDoNotKnowRowsRefuseAStoreThatUsesThem) {
  StepDone(CommitEvent(MakeEvent("order.created")), /*rows=*/true);
  const storage::StoreManifest manifest = StoredManifest();
  // A build before the feature sets checks only the version.
  absl::Status oldest = features::CheckOpenableAs(
      manifest, path(), false, 1,
      [](features::Kind, absl::string_view) { return false; });
  EXPECT_STATUS_CODE(oldest, absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(oldest.message()),
              ::testing::HasSubstr("schema version 2"));
  // A build with feature sets that was given version 2 without the feature.
  absl::Status without =
      features::CheckOpenableAs(manifest, path(), false, 2, KnownBeforeRows);
  EXPECT_STATUS_CODE(without, absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(without.message()),
              ::testing::HasSubstr("incompatible feature 'workflow_rows'"));
  EXPECT_OUTBOX_OK(features::CheckOpenable(manifest, path(), true));
}

}  // namespace
}  // namespace outbox
