// Copyright (c) edge-outbox authors.

#include "agent/expr/step_id.h"

#include <openssl/sha.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace outbox::workflow {
namespace {

// "5d1d3b0e-6c4f-..." -> its 16 bytes.
std::string UuidBytes(absl::string_view uuid) {
  return absl::HexStringToBytes(absl::StrReplaceAll(uuid, {{"-", ""}}));
}

std::string FormatUuid(const unsigned char* b) {
  const std::string hex = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(b), 16));
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-",
                      hex.substr(12, 4), "-", hex.substr(16, 4), "-",
                      hex.substr(20, 12));
}

}  // namespace

std::string Uuid5(absl::string_view namespace_uuid, absl::string_view name) {
  const std::string input = absl::StrCat(UuidBytes(namespace_uuid), name);
  std::array<unsigned char, SHA_DIGEST_LENGTH> digest;
  if (SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(),
           digest.data()) == nullptr) {
    // Only a broken OpenSSL fails a one-shot SHA-1; an id that is not
    // derived from its inputs would break deduplication, so stop here.
    std::fprintf(stderr, "outbox: SHA-1 failed in OpenSSL\n");
    std::abort();
  }
  digest[6] = static_cast<unsigned char>((digest[6] & 0x0f) | 0x50);
  digest[8] = static_cast<unsigned char>((digest[8] & 0x3f) | 0x80);
  return FormatUuid(digest.data());
}

std::string StepRequestId(absl::string_view event_id, absl::string_view step,
                          bool revert) {
  return Uuid5(kStepIdNamespace,
               absl::StrCat(event_id, "/", step, revert ? "/revert" : ""));
}

}  // namespace outbox::workflow
