// Copyright (c) edge-outbox authors.

#include "tools/json_text.h"

#include "absl/strings/str_format.h"

namespace outbox {
namespace {

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

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

char32_t DecodeUtf8(absl::string_view s, size_t i, size_t len) {
  const auto byte = [&](size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(s[i + k]));
  };
  if (len == 1) return byte(0);
  char32_t c = byte(0) & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) c = (c << 6) | (byte(k) & 0x3F);
  return c;
}

bool IsValidUtf8(absl::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string JsonQuote(absl::string_view s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (len > 1) {
      out.append(s.data() + i, len);
      i += len;
      continue;
    }
    const char c = s[i++];
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
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
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace outbox
