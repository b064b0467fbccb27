// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_LIB_SCHEMA_H_
#define OUTBOX_LIB_SCHEMA_H_

#include <cstdint>

namespace outbox {

// Version of the on-disk layout (keys.h, proto/storage.proto). A store
// written with a higher version is refused: this library cannot know what
// the newer one meant. Bump only when older code could misread new data.
inline constexpr uint32_t kSchemaVersion = 1;

inline constexpr char kLibraryVersion[] = "edge-outbox 0.1.0";

}  // namespace outbox

#endif  // OUTBOX_LIB_SCHEMA_H_
