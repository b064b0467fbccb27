// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_LIB_SCHEMA_H_
#define OUTBOX_LIB_SCHEMA_H_

#include <cstdint>

namespace outbox {

// Version of the base on-disk layout (keys.h, proto/storage.proto). A store
// written with a higher version is refused: this library cannot know what
// the newer one meant.
//
// Additions to the layout (a column family, a field whose absence older code
// misreads) are features (lib/features.h), not versions: each is recorded in
// the store's manifest by the batch that first uses it, so a store that never
// used one stays readable by builds older than it. Bump the version only for
// a change that every store is subject to (a new key encoding, a family
// rewritten). Builds that predate the feature sets (up to abb4d57) check only
// this version: a future incompatible feature that those builds would
// misread must also raise the manifest's schema_version when it is set, and
// the library that adds it raises kSchemaVersion with it.
inline constexpr uint32_t kSchemaVersion = 2;

// The version a new store is created with, and keeps until a feature that
// raises it is used: a store that never used one stays readable by every
// build of version 1.
inline constexpr uint32_t kBaseSchemaVersion = 1;

// Raised by the first use of workflow_rows (lib/features.h).
inline constexpr uint32_t kWorkflowRowsSchemaVersion = 2;

inline constexpr char kLibraryVersion[] = "edge-outbox 0.1.0";

}  // namespace outbox

#endif  // OUTBOX_LIB_SCHEMA_H_
