// Copyright (c) edge-outbox authors.

#include "lib/features.h"

#include "absl/strings/str_cat.h"
#include "lib/schema.h"

namespace outbox::features {
namespace {

struct KnownFeature {
  const char* name;
  Kind kind;
  // The manifest's schema_version once it is set (0: left as it is).
  uint32_t raises_schema = 0;
};

// Every feature this library reads and writes correctly. Never remove one:
// a library that stopped knowing a feature would refuse stores it wrote.
constexpr KnownFeature kKnown[] = {
    {kWorkflows, Kind::kIncompat},
    {kWorkflowRows, Kind::kIncompat, kWorkflowRowsSchemaVersion},
};

const google::protobuf::RepeatedPtrField<storage::StoreFeature>& Set(
    const storage::StoreManifest& m, Kind kind) {
  switch (kind) {
    case Kind::kCompat:
      return m.compat_features();
    case Kind::kReadOnlyCompat:
      return m.ro_compat_features();
    case Kind::kIncompat:
      break;
  }
  return m.incompat_features();
}

google::protobuf::RepeatedPtrField<storage::StoreFeature>* MutableSet(
    storage::StoreManifest* m, Kind kind) {
  switch (kind) {
    case Kind::kCompat:
      return m->mutable_compat_features();
    case Kind::kReadOnlyCompat:
      return m->mutable_ro_compat_features();
    case Kind::kIncompat:
      break;
  }
  return m->mutable_incompat_features();
}

// The first feature of `kind` in `m` that `known` does not know.
const storage::StoreFeature* FirstUnknown(
    const storage::StoreManifest& m, Kind kind,
    const std::function<bool(Kind, absl::string_view)>& known) {
  for (const storage::StoreFeature& f : Set(m, kind)) {
    if (!known(kind, f.name())) return &f;
  }
  return nullptr;
}

std::string Describe(const storage::StoreFeature& f) {
  return absl::StrCat(
      "'", f.name(), "' (first used by ",
      f.written_by().empty() ? "an unnamed version" : f.written_by(), ")");
}

}  // namespace

bool Known(Kind kind, absl::string_view name) {
  for (const KnownFeature& k : kKnown) {
    if (k.kind == kind && name == k.name) return true;
  }
  return false;
}

bool Has(const storage::StoreManifest& manifest, absl::string_view name) {
  for (Kind kind : {Kind::kCompat, Kind::kReadOnlyCompat, Kind::kIncompat}) {
    for (const storage::StoreFeature& f : Set(manifest, kind)) {
      if (f.name() == name) return true;
    }
  }
  return false;
}

void Add(storage::StoreManifest* manifest, absl::string_view name,
         int64_t now_unix_ms) {
  if (Has(*manifest, name)) return;
  for (const KnownFeature& k : kKnown) {
    if (name != k.name) continue;
    storage::StoreFeature* f = MutableSet(manifest, k.kind)->Add();
    f->set_name(k.name);
    f->set_written_by(kLibraryVersion);
    f->set_set_unix_ms(now_unix_ms);
    // Builds before feature sets check only the schema version.
    if (k.raises_schema > manifest->schema_version()) {
      manifest->set_schema_version(k.raises_schema);
    }
    return;
  }
}

absl::Status CheckOpenable(const storage::StoreManifest& manifest,
                           const std::string& path, bool writable) {
  return CheckOpenableAs(manifest, path, writable, kSchemaVersion, Known);
}

absl::Status CheckOpenableAs(
    const storage::StoreManifest& manifest, const std::string& path,
    bool writable, uint32_t schema_version,
    const std::function<bool(Kind, absl::string_view)>& known) {
  if (manifest.schema_version() > schema_version) {
    return absl::FailedPreconditionError(absl::StrCat(
        "outbox store '", path, "' has schema version ",
        manifest.schema_version(), ", newer than this library's ",
        schema_version, " (store created by ", manifest.created_by(),
        "); open it with a newer library (nothing was changed)"));
  }
  if (manifest.schema_version() == 0) {
    return absl::DataLossError(absl::StrCat(
        "outbox store '", path, "' has a manifest without a schema version"));
  }
  if (const storage::StoreFeature* f =
          FirstUnknown(manifest, Kind::kIncompat, known)) {
    return absl::FailedPreconditionError(
        absl::StrCat("outbox store '", path, "' uses the incompatible feature ",
                     Describe(*f), ", which ", kLibraryVersion,
                     " does not know; open it with ", f->written_by(),
                     " or newer (nothing was changed)"));
  }
  const storage::StoreFeature* ro =
      FirstUnknown(manifest, Kind::kReadOnlyCompat, known);
  if (writable && ro != nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "outbox store '", path, "' uses the feature ", Describe(*ro),
        ", which ", kLibraryVersion,
        " can read but must not write: open it read-only (Store::OpenReadOnly, "
        "outboxctl), or for writing with ",
        ro->written_by(), " or newer (nothing was changed)"));
  }
  return absl::OkStatus();
}

}  // namespace outbox::features
