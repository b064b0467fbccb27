// Copyright (c) edge-outbox authors.

#include "tools/ctl/text.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace outbox::ctl {
namespace {

// The terminal rules below need code points, so outboxctl decodes UTF-8
// itself: nlohmann::json (tools/json_bytes.h) validates but does not expose
// its decoder, Abseil 20220623 only encodes, and the C library's mbrtoc32
// needs a UTF-8 locale that a minimal (or fully static) firmware image
// lacks.

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The length (1..4) of the well-formed UTF-8 sequence starting at s[i], or 0
// if there is none (stray continuation byte, overlong form, surrogate, past
// U+10FFFF, truncated). REQUIRES: i < s.size().
size_t Utf8SequenceLength(absl::string_view s, size_t i) {
  const auto byte = [&](size_t k) {
    return static_cast<unsigned char>(s[i + k]);
  };
  const unsigned char c = byte(0);
  if (c < 0x80) return 1;
  size_t len;
  unsigned char min2 = 0x80, max2 = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) min2 = 0xA0;  // overlong
    if (c == 0xED) max2 = 0x9F;  // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) min2 = 0x90;  // overlong
    if (c == 0xF4) max2 = 0x8F;  // past U+10FFFF
  } else {
    return 0;  // continuation byte, C0/C1 overlong lead, or F5..FF
  }
  if (s.size() - i < len) return 0;
  if (byte(1) < min2 || byte(1) > max2) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (!IsContinuation(byte(k))) return 0;
  }
  return len;
}

// The code point of the well-formed sequence of `len` bytes at s[i].
// REQUIRES: len == Utf8SequenceLength(s, i) && len > 0.
char32_t DecodeUtf8(absl::string_view s, size_t i, size_t len) {
  const auto byte = [&](size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(s[i + k]));
  };
  if (len == 1) return byte(0);
  char32_t c = byte(0) & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) c = (c << 6) | (byte(k) & 0x3F);
  return c;
}

// Code points a terminal acts on instead of showing: C0, DEL, C1, and the
// bidirectional embeddings/overrides/isolates (U+202A..E, U+2066..9).
bool IsUnsafeCodePoint(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

}  // namespace

bool IsSafeForTerminal(absl::string_view s, bool allow_newlines) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) return false;
    const char32_t c = DecodeUtf8(s, i, len);
    const bool newline = c == '\n' || c == '\t' || c == '\r';
    if (IsUnsafeCodePoint(c) && !(allow_newlines && newline)) return false;
    i += len;
  }
  return true;
}

std::string Quote(absl::string_view s) {
  bool bare = !s.empty() && IsSafeForTerminal(s, /*allow_newlines=*/false);
  for (char c : s) {
    if (c == ' ' || c == '"' || c == '\\' || c == '=') bare = false;
  }
  if (bare) return std::string(s);
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    const char32_t c = DecodeUtf8(s, i, len);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x80 && IsUnsafeCodePoint(c)) {
          absl::StrAppendFormat(&out, "\\x%02x", static_cast<uint32_t>(c));
        } else if (IsUnsafeCodePoint(c)) {
          absl::StrAppendFormat(&out, "\\u{%04x}", static_cast<uint32_t>(c));
        } else {
          out.append(s.data() + i, len);
        }
    }
    i += len;
  }
  out += '"';
  return out;
}

std::string FormatRfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E3SZ", t, absl::UTCTimeZone());
}

std::string FormatTimeOr(absl::Time t, absl::string_view none) {
  if (t == absl::InfinitePast() || t == absl::InfiniteFuture()) {
    return std::string(none);
  }
  return FormatRfc3339(t);
}

}  // namespace outbox::ctl
