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

// Finds whether a batch writes (puts) into one column family. Deletions are
// not a use: they only remove what an earlier batch wrote.
class FamilyPutFinder final : public rocksdb::WriteBatch::Handler {
 public:
  explicit FamilyPutFinder(uint32_t family) : family_(family) {}
  bool found() const { return found_; }

  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice&,
                        const rocksdb::Slice&) override {
    found_ = found_ || cf == family_;
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(uint32_t cf, const rocksdb::Slice&,
                          const rocksdb::Slice&) override {
    found_ = found_ || cf == family_;
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
  bool Continue() override { return !found_; }

 private:
  const uint32_t family_;
  bool found_ = false;
};

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
  if (workflows_ == nullptr || features::Has(manifest_, features::kWorkflows)) {
    return std::nullopt;  // after the first use, this costs nothing
  }
  FamilyPutFinder finder(workflows_->GetID());
  // A batch it cannot walk (never ours) is taken to use it: setting a
  // feature early only makes older builds refuse sooner, never misread.
  const rocksdb::Status s = batch.Iterate(&finder);
  if (s.ok() && !finder.found()) return std::nullopt;
  storage::StoreManifest manifest = manifest_;
  features::Add(&manifest, features::kWorkflows, ToStoredMillis(Now()));
  return manifest;
}

}  // namespace outbox
