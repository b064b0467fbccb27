// Copyright (c) edge-outbox authors.

#include "platform/body_coding.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace outbox {
namespace {

// zlib's windowBits: 15 (32 KiB window) + 16 for the gzip wrapper.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kZstdLevel = 3;
constexpr size_t kChunk = 64 << 10;

absl::StatusOr<std::string> Gzip(absl::string_view body) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindowBits, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, body.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) {
    return absl::InternalError(absl::StrCat("gzip: deflate failed (", rc, ")"));
  }
  return out;
}

absl::StatusOr<std::string> Gunzip(absl::string_view body, size_t max_bytes) {
  z_stream z{};
  if (inflateInit2(&z, kGzipWindowBits) != Z_OK) {
    return absl::InternalError("gzip: inflateInit2 failed");
  }
  std::unique_ptr<z_stream, int (*)(z_stream*)> end(&z, inflateEnd);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  std::string out;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    const size_t at = out.size();
    out.resize(at + kChunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + at);
    z.avail_out = static_cast<uInt>(kChunk);
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(at + kChunk - z.avail_out);
    if (out.size() > max_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "gzip: the body decodes to more than ", max_bytes, " bytes"));
    }
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) {
      return absl::InvalidArgumentError(
          "the body is not a complete gzip stream");
    }
  }
  if (z.avail_in != 0) {
    return absl::InvalidArgumentError(
        "the body has bytes after its gzip stream");
  }
  return out;
}

absl::StatusOr<std::string> Zstd(absl::string_view body) {
  std::string out(ZSTD_compressBound(body.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), body.data(),
                                 body.size(), kZstdLevel);
  if (ZSTD_isError(n)) {
    return absl::InternalError(
        absl::StrCat("zstd: compression failed (", ZSTD_getErrorName(n), ")"));
  }
  out.resize(n);
  return out;
}

absl::StatusOr<std::string> Unzstd(absl::string_view body, size_t max_bytes) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(),
                                                         ZSTD_freeDCtx);
  if (ctx == nullptr) return absl::InternalError("zstd: out of memory");
  ZSTD_inBuffer in{body.data(), body.size(), 0};
  std::string out;
  for (;;) {
    const size_t at = out.size();
    out.resize(at + kChunk);
    ZSTD_outBuffer o{out.data() + at, kChunk, 0};
    const size_t rc = ZSTD_decompressStream(ctx.get(), &o, &in);
    out.resize(at + o.pos);
    if (ZSTD_isError(rc)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the body is not a zstd stream (", ZSTD_getErrorName(rc), ")"));
    }
    if (out.size() > max_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "zstd: the body decodes to more than ", max_bytes, " bytes"));
    }
    // A frame ended with the input: done. (One ended before it: the next
    // frame follows, as RFC 8878 allows.)
    if (rc == 0 && in.pos == in.size) return out;
    // The decoder waits for input there is no more of.
    if (in.pos == in.size && o.pos < kChunk) {
      return absl::InvalidArgumentError(
          "the body is not a complete zstd stream");
    }
  }
}

}  // namespace

absl::StatusOr<BodyCoding> ParseBodyCoding(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower.empty() || lower == "identity") return BodyCoding::kIdentity;
  if (lower == "gzip") return BodyCoding::kGzip;
  if (lower == "zstd") return BodyCoding::kZstd;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown content coding '", name, "' (known: identity, gzip, zstd)"));
}

absl::string_view BodyCodingName(BodyCoding coding) {
  switch (coding) {
    case BodyCoding::kIdentity:
      break;
    case BodyCoding::kGzip:
      return "gzip";
    case BodyCoding::kZstd:
      return "zstd";
  }
  return "identity";
}

absl::StatusOr<std::string> EncodeBody(BodyCoding coding,
                                       absl::string_view body) {
  switch (coding) {
    case BodyCoding::kIdentity:
      break;
    case BodyCoding::kGzip:
      return Gzip(body);
    case BodyCoding::kZstd:
      return Zstd(body);
  }
  return std::string(body);
}

absl::StatusOr<std::string> DecodeBody(BodyCoding coding,
                                       absl::string_view body,
                                       size_t max_bytes) {
  switch (coding) {
    case BodyCoding::kIdentity:
      break;
    case BodyCoding::kGzip:
      return Gunzip(body, max_bytes);
    case BodyCoding::kZstd:
      return Unzstd(body, max_bytes);
  }
  if (body.size() > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the body is more than ", max_bytes, " bytes"));
  }
  return std::string(body);
}

}  // namespace outbox
