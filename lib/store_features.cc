// Copyright (c) edge-outbox authors.
//
// The store's feature sets (lib/features.h): checked before anything is
// written, and each feature recorded in the batch that first uses it.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/codec.h"
#include "lib/features.h"
#include "lib/keys.h"
#include "lib/rocks_options.h"
#include "lib/rocks_status.h"
#include "lib/store_impl.h"

namespace outbox {
namespace {

// Finds whether a batch writes (puts) into one column family, and whether
// it puts a key there that starts with one of `first`. Deletions are not a
// use: they only remove what an earlier batch wrote.
class FamilyPutFinder final : public rocksdb::WriteBatch::Handler {
 public:
  FamilyPutFinder(uint32_t family, absl::string_view first)
      : family_(family), first_(first) {}
  bool found() const { return found_; }
  bool found_first() const { return found_first_; }

  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice&) override {
    See(cf, key);
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(uint32_t cf, const rocksdb::Slice& key,
                          const rocksdb::Slice&) override {
    See(cf, key);
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t, const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(uint32_t, const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteRangeCF(uint32_t, const rocksdb::Slice&,
                                const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  bool Continue() override { return !found_first_; }

 private:
  void See(uint32_t cf, const rocksdb::Slice& key) {
    if (cf != family_) return;
    found_ = true;
    found_first_ =
        found_first_ ||
        (!key.empty() && first_.find(key[0]) != absl::string_view::npos);
  }

  const uint32_t family_;
  const absl::string_view first_;
  bool found_ = false;
  bool found_first_ = false;
};

// The first characters of the keys that use workflow_rows (keys.h).
constexpr char kRowKeyStarts[] = {keys::kWorkflowHeadPrefix[0],
                                  keys::kWorkflowStepPrefix[0],
                                  keys::kWorkflowAnswerPrefix[0], '\0'};

}  // namespace

absl::StatusOr<std::optional<storage::StoreManifest>>
StoreImpl::ReadManifestWithoutWriting(const rocksdb::DBOptions& db_options) {
  // RocksDB's read-only mode takes no lock and writes nothing (with no LOG
  // of its own): a refused store is left byte for byte as it was, which a
  // writable open could not promise (it writes OPTIONS, LOG and MANIFEST
  // files before anything can be read).
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {keys::kMetaFamily, MakeFamilyOptions(keys::kMetaFamily)}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(
      ReadWithoutWriting(db_options), path_, descriptors, &handles, &raw);
  if (!s.ok()) return FromRocks(s, absl::StrCat("reading '", path_, "'"));
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string value;
  s = db->Get(rocksdb::ReadOptions(), handles[1], keys::kManifestKey, &value);
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  if (s.IsNotFound()) return std::nullopt;  // LoadOrCreateManifest decides
  if (!s.ok()) return FromRocks(s, "reading the store manifest");
  storage::StoreManifest manifest;
  OUTBOX_RETURN_IF_ERROR(
      DecodeStored(keys::kMetaFamily, keys::kManifestKey, value, &manifest));
  return manifest;
}

absl::Status StoreImpl::CheckFeaturesBeforeWriting(
    const rocksdb::DBOptions& db_options) {
  OUTBOX_ASSIGN_OR_RETURN(std::optional<storage::StoreManifest> manifest,
                          ReadManifestWithoutWriting(db_options));
  if (!manifest.has_value()) return absl::OkStatus();
  return features::CheckOpenable(*manifest, path_, /*writable=*/true);
}

absl::StatusOr<bool> StoreImpl::AddFeaturesInUseLocked(
    storage::StoreManifest* manifest) {
  // workflow_rows was recorded by its first batch from the start: a store
  // that uses it without the record does not exist.
  if (workflows_ == nullptr || features::Has(*manifest, features::kWorkflows)) {
    return false;
  }
  // A store written before the feature sets existed may hold workflow rows
  // already: record the feature it has been using.
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), workflows_));
  it->SeekToFirst();
  if (!it->status().ok()) {
    return FromRocks(it->status(), "reading the workflow table");
  }
  if (!it->Valid()) return false;
  features::Add(manifest, features::kWorkflows, ToStoredMillis(Now()));
  return true;
}

std::optional<storage::StoreManifest> StoreImpl::FeaturesFirstUsedLocked(
    const rocksdb::WriteBatch& batch) {
  if (workflows_ == nullptr ||
      features::Has(manifest_, features::kWorkflowRows)) {
    return std::nullopt;  // after the last first use, this costs nothing
  }
  FamilyPutFinder finder(workflows_->GetID(), kRowKeyStarts);
  // A batch it cannot walk (never ours) is taken to use both: setting a
  // feature early only makes older builds refuse sooner, never misread.
  const bool walked = batch.Iterate(&finder).ok();
  const bool workflows = !features::Has(manifest_, features::kWorkflows) &&
                         (!walked || finder.found());
  const bool rows = !walked || finder.found_first();
  if (!workflows && !rows) return std::nullopt;
  storage::StoreManifest manifest = manifest_;
  const int64_t now_ms = ToStoredMillis(Now());
  if (workflows || rows) features::Add(&manifest, features::kWorkflows, now_ms);
  if (rows) features::Add(&manifest, features::kWorkflowRows, now_ms);
  return manifest;
}

}  // namespace outbox
