// Copyright (c) edge-outbox authors.

#include "tools/ctl/text.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace outbox::ctl {
namespace {

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
