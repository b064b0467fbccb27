// Copyright (c) edge-outbox authors.
//
// HTTP body codings (Content-Encoding) over zlib and libzstd: the agent
// compresses batched request bodies with them (a destination's
// `batch { compression }`), and outbox-sink decodes them. Both libraries
// are what RocksDB itself links, so every build, the fully static firmware
// one included, already has them.

#ifndef OUTBOX_PLATFORM_BODY_CODING_H_
#define OUTBOX_PLATFORM_BODY_CODING_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace outbox {

enum class BodyCoding {
  kIdentity,  // no Content-Encoding
  kGzip,      // RFC 1952, zlib's deflate at its default level (6)
  kZstd,      // RFC 8878, level 3 (libzstd's default)
};

// "identity" (or ""), "gzip" or "zstd", as in Content-Encoding (case
// insensitive). Errors: kInvalidArgument naming the coding and the ones
// known.
absl::StatusOr<BodyCoding> ParseBodyCoding(absl::string_view name);

// The Content-Encoding value ("identity" for kIdentity).
absl::string_view BodyCodingName(BodyCoding coding);

// `body` compressed with `coding` (a copy for kIdentity). Errors: kInternal
// if the library fails (out of memory).
absl::StatusOr<std::string> EncodeBody(BodyCoding coding,
                                       absl::string_view body);

// `body` decompressed, at most `max_bytes` of it, so that a small body cannot
// expand without bound. Errors: kInvalidArgument if it is not a complete
// stream of that coding (trailing bytes included); kResourceExhausted if it
// decodes to more than `max_bytes`.
absl::StatusOr<std::string> DecodeBody(BodyCoding coding,
                                       absl::string_view body,
                                       size_t max_bytes);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_BODY_CODING_H_
