// Copyright (c) edge-outbox authors.
//
// What a library does with a manifest's feature sets: unknown incompatible
// features refuse every open, unknown read-only-compatible ones refuse
// writing only, unknown compatible ones nothing; each refusal names the
// feature and the version that wrote it.

#include "lib/features.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/schema.h"
#include "tests/testing/status.h"

namespace outbox::features {
namespace {

using ::testing::HasSubstr;

storage::StoreManifest Manifest() {
  storage::StoreManifest m;
  m.set_schema_version(kSchemaVersion);
  m.set_created_by("edge-outbox 0.1.0");
  return m;
}

void AddUnknown(google::protobuf::RepeatedPtrField<storage::StoreFeature>* set,
                const std::string& name) {
  storage::StoreFeature* f = set->Add();
  f->set_name(name);
  f->set_written_by("edge-outbox 9.1.0");
}

TEST(FeaturesTest, KnownFeaturesOpenEitherWay) {
  storage::StoreManifest m = Manifest();
  Add(&m, kWorkflows, 1);
  Add(&m, kWorkflows, 2);  // once only
  ASSERT_EQ(m.incompat_features_size(), 1);
  EXPECT_EQ(m.incompat_features(0).set_unix_ms(), 1);
  EXPECT_OUTBOX_OK(CheckOpenable(m, "/s", /*writable=*/true));
  EXPECT_OUTBOX_OK(CheckOpenable(m, "/s", /*writable=*/false));
}

TEST(FeaturesTest, UnknownIncompatibleFeatureRefusesEveryOpen) {
  storage::StoreManifest m = Manifest();
  AddUnknown(m.mutable_incompat_features(), "sharded_queue");
  for (bool writable : {true, false}) {
    absl::Status s = CheckOpenable(m, "/s", writable);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(s.message(), HasSubstr("'sharded_queue'"));
    EXPECT_THAT(s.message(), HasSubstr("edge-outbox 9.1.0"));
    EXPECT_THAT(s.message(), HasSubstr("nothing was changed"));
  }
}

TEST(FeaturesTest, UnknownReadOnlyCompatibleFeatureRefusesWritingOnly) {
  storage::StoreManifest m = Manifest();
  AddUnknown(m.mutable_ro_compat_features(), "dead_letter_index");
  absl::Status s = CheckOpenable(m, "/s", /*writable=*/true);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("'dead_letter_index'"));
  EXPECT_THAT(s.message(), HasSubstr("open it read-only"));
  EXPECT_THAT(s.message(), HasSubstr("edge-outbox 9.1.0"));
  EXPECT_OUTBOX_OK(CheckOpenable(m, "/s", /*writable=*/false));
}

TEST(FeaturesTest, UnknownCompatibleFeatureIsIgnored) {
  storage::StoreManifest m = Manifest();
  AddUnknown(m.mutable_compat_features(), "size_hint");
  EXPECT_OUTBOX_OK(CheckOpenable(m, "/s", /*writable=*/true));
}

TEST(FeaturesTest, KnownNameInAnotherSetIsUnknown) {
  // A later library could move a feature between sets; this one knows
  // workflows as incompatible only, so elsewhere it is not the same thing.
  storage::StoreManifest m = Manifest();
  AddUnknown(m.mutable_ro_compat_features(), kWorkflows);
  EXPECT_EQ(CheckOpenable(m, "/s", /*writable=*/true).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(FeaturesTest, NewerSchemaVersionIsRefused) {
  storage::StoreManifest m = Manifest();
  m.set_schema_version(kSchemaVersion + 1);
  absl::Status s = CheckOpenable(m, "/s", /*writable=*/false);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("schema version"));
}

}  // namespace
}  // namespace outbox::features
