// Copyright (c) edge-outbox authors.
//
// On-disk features of a store, in the manner of ext4's feature sets: the
// manifest (StoreManifest) lists each addition to the base layout that the
// store uses, set in the same batch as its first use. A library knows a
// fixed list of features; what it does with a store depends only on the ones
// it does not know:
//
//   compat     unknown: ignored (older code reads and writes correctly)
//   ro_compat  unknown: readable, never writable (Store::Open refuses,
//              Store::OpenReadOnly works)
//   incompat   unknown: the store is refused (older code would misread it)
//
// schema_version (lib/schema.h) is the base layout itself; a feature is an
// addition to it that a store may or may not use. See
// docs/firmware-updates.md.

#ifndef OUTBOX_LIB_FEATURES_H_
#define OUTBOX_LIB_FEATURES_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/storage.pb.h"

namespace outbox::features {

enum class Kind { kCompat, kReadOnlyCompat, kIncompat };

// The workflow table (outbox.workflows: states, cancels, result rows, and
// the steps in doubt of 48c16d6). A build without it would deliver a
// half-way workflow's event as a plain event and never compensate.
// Incompatible. Set by the first batch that writes a row of that family.
inline constexpr char kWorkflows[] = "workflows";

// Workflows stored as rows (a head, a row per step, an answer row per kept
// answer: keys.h) instead of one state under "s". A build without it finds
// no state for such a workflow and would start it again from its first
// step, even one that was compensating. Incompatible. Set by the first
// batch that puts a head, step or answer row; that batch also raises the
// manifest's schema_version to kWorkflowRowsSchemaVersion, so that builds
// older than the feature sets (which check only the version) refuse it too.
inline constexpr char kWorkflowRows[] = "workflow_rows";

// Whether this library knows `name` as a feature of kind `kind`.
bool Known(Kind kind, absl::string_view name);

// Whether `manifest` lists `name` in any of its sets.
bool Has(const storage::StoreManifest& manifest, absl::string_view name);

// Adds the known feature `name` to its set in `manifest`, as first used by
// this library at `now_unix_ms`. No-op if it is listed already.
void Add(storage::StoreManifest* manifest, absl::string_view name,
         int64_t now_unix_ms);

// Whether this library may open the store at `path` whose manifest is
// `manifest`, for writing when `writable`. Errors (kFailedPrecondition,
// naming the feature and the library version that wrote it): a schema
// version above this library's; an incompatible feature it does not know;
// when `writable`, a read-only-compatible feature it does not know.
// kDataLoss: a manifest without a schema version.
absl::Status CheckOpenable(const storage::StoreManifest& manifest,
                           const std::string& path, bool writable);

// What CheckOpenable answers for a library of schema version
// `schema_version` that knows the features `known` says: an older build's
// answer, for the tests that pin how it meets what this one writes.
absl::Status CheckOpenableAs(
    const storage::StoreManifest& manifest, const std::string& path,
    bool writable, uint32_t schema_version,
    const std::function<bool(Kind, absl::string_view)>& known);

}  // namespace outbox::features

#endif  // OUTBOX_LIB_FEATURES_H_
