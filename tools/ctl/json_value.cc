// Copyright (c) edge-outbox authors.

#include "tools/ctl/json_value.h"

#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tools/ctl/text.h"
#include "lib/status_macros.h"

namespace outbox::ctl {
namespace {

constexpr int kMaxDepth = 512;

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    *out += static_cast<char>(c);
  } else if (c < 0x800) {
    *out += static_cast<char>(0xC0 | (c >> 6));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    *out += static_cast<char>(0xE0 | (c >> 12));
    *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (c >> 18));
    *out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Recursive descent over `text_`; `pos_` is the next unread byte.
class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue value;
    OUTBOX_RETURN_IF_ERROR(ParseValue(0, &value));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the value");
    return value;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid JSON at byte ", pos_, ": ", what));
  }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(absl::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) return false;
    pos_ += literal.size();
    return true;
  }

  absl::Status ParseValue(int depth, JsonValue* out) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    SkipSpace();
    if (pos_ == text_.size()) return Error("expected a value");
    const char c = text_[pos_];
    if (c == '{') return ParseObject(depth, out);
    if (c == '[') return ParseArray(depth, out);
    if (c == '"') {
      out->kind = JsonValue::Kind::kString;
      return ParseString(&out->text);
    }
    if (c == '-' || absl::ascii_isdigit(c)) return ParseNumber(out);
    if (Consume("true") || Consume("false")) {
      out->kind = JsonValue::Kind::kBool;
      out->boolean = c == 't';
      return absl::OkStatus();
    }
    if (Consume("null")) return absl::OkStatus();
    return Error("expected a value");
  }

  absl::Status ParseObject(int depth, JsonValue* out) {
    out->kind = JsonValue::Kind::kObject;
    ++pos_;  // '{'
    SkipSpace();
    if (Consume("}")) return absl::OkStatus();
    while (true) {
      SkipSpace();
      if (pos_ == text_.size() || text_[pos_] != '"') {
        return Error("expected a member name");
      }
      std::string key;
      OUTBOX_RETURN_IF_ERROR(ParseString(&key));
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      JsonValue value;
      OUTBOX_RETURN_IF_ERROR(ParseValue(depth + 1, &value));
      out->keys.push_back(std::move(key));
      out->items.push_back(std::move(value));
      SkipSpace();
      if (Consume("}")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  absl::Status ParseArray(int depth, JsonValue* out) {
    out->kind = JsonValue::Kind::kArray;
    ++pos_;  // '['
    SkipSpace();
    if (Consume("]")) return absl::OkStatus();
    while (true) {
      JsonValue value;
      OUTBOX_RETURN_IF_ERROR(ParseValue(depth + 1, &value));
      out->items.push_back(std::move(value));
      SkipSpace();
      if (Consume("]")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }

  size_t ConsumeDigits() {
    const size_t start = pos_;
    while (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) ++pos_;
    return pos_ - start;
  }

  absl::Status ParseNumber(JsonValue* out) {
    const size_t start = pos_;
    Consume("-");
    if (Consume("0")) {
      // No leading zeros: "01" is not a number.
    } else if (ConsumeDigits() == 0) {
      return Error("expected digits");
    }
    if (Consume(".") && ConsumeDigits() == 0) {
      return Error("expected digits after '.'");
    }
    if (Consume("e") || Consume("E")) {
      if (!Consume("+")) Consume("-");
      if (ConsumeDigits() == 0) return Error("expected exponent digits");
    }
    out->kind = JsonValue::Kind::kNumber;
    out->text = std::string(text_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  absl::StatusOr<char32_t> ParseHex4() {
    if (text_.size() - pos_ < 4) return Error("truncated \\u escape");
    char32_t c = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = text_[pos_++];
      if (!absl::ascii_isxdigit(h)) return Error("bad \\u escape");
      c = c * 16 + (absl::ascii_isdigit(h) ? h - '0'
                                           : absl::ascii_tolower(h) - 'a' + 10);
    }
    return c;
  }

  absl::Status ParseEscape(std::string* out) {
    if (pos_ == text_.size()) return Error("unterminated string");
    const char e = text_[pos_++];
    // The one-character escapes and what they stand for.
    constexpr absl::string_view kEscapes = "\"\\/bfnrt";
    constexpr absl::string_view kDecoded = "\"\\/\b\f\n\r\t";
    const size_t k = kEscapes.find(e);
    if (k != absl::string_view::npos) {
      *out += kDecoded[k];
      return absl::OkStatus();
    }
    if (e != 'u') return Error("unknown escape");
    OUTBOX_ASSIGN_OR_RETURN(char32_t c, ParseHex4());
    if (c >= 0xDC00 && c <= 0xDFFF) return Error("lone low surrogate");
    if (c >= 0xD800 && c <= 0xDBFF) {
      if (!Consume("\\u")) return Error("lone high surrogate");
      OUTBOX_ASSIGN_OR_RETURN(char32_t low, ParseHex4());
      if (low < 0xDC00 || low > 0xDFFF) return Error("lone high surrogate");
      c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
    }
    AppendUtf8(c, out);
    return absl::OkStatus();
  }

  absl::Status ParseString(std::string* out) {
    ++pos_;  // '"'
    while (pos_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return absl::OkStatus();
      }
      if (c == '\\') {
        ++pos_;
        OUTBOX_RETURN_IF_ERROR(ParseEscape(out));
        continue;
      }
      if (c < 0x20) return Error("unescaped control character in a string");
      const size_t len = Utf8SequenceLength(text_, pos_);
      if (len == 0) return Error("invalid UTF-8 in a string");
      out->append(text_.data() + pos_, len);
      pos_ += len;
    }
    return Error("unterminated string");
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue* JsonValue::Find(absl::string_view key) const {
  if (kind != Kind::kObject) return nullptr;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return &items[i];
  }
  return nullptr;
}

absl::StatusOr<JsonValue> ParseJson(absl::string_view text) {
  return Parser(text).ParseDocument();
}

}  // namespace outbox::ctl
