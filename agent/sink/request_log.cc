// Copyright (c) edge-outbox authors.

#include "agent/sink/request_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace outbox::sink {
namespace {

// True if `s` is well-formed UTF-8 (no overlongs, surrogates or code points
// past U+10FFFF), i.e. it can go into a JSON string as it is.
bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= static_cast<size_t>(extra)) return false;
    for (int k = 1; k <= extra; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((extra == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

// A JSON string literal. REQUIRES: IsValidUtf8(s).
std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
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
        if (c < 0x20 || c == 0x7F) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out.push_back(ch);
        }
    }
  }
  out += "\"";
  return out;
}

// Header values come from the network and may hold any byte; a value that
// is not UTF-8 is logged C-escaped, which keeps the line valid JSON.
std::string OptionalString(const std::optional<std::string>& s) {
  if (!s.has_value()) return "null";
  if (IsValidUtf8(*s)) return JsonString(*s);
  return JsonString(absl::CHexEscape(*s));
}

const char* Bool(bool b) { return b ? "true" : "false"; }

}  // namespace

std::string FormatLogLine(int64_t seq, const LogRecord& r) {
  std::string line = absl::StrCat(
      "{\"seq\":", seq, ",\"id\":", OptionalString(r.id),
      ",\"webhook_timestamp\":",
      r.webhook_timestamp.has_value() ? absl::StrCat(*r.webhook_timestamp)
                                      : "null",
      ",\"ts_ms\":", absl::ToUnixMillis(r.received),
      ",\"method\":", OptionalString(r.method),
      ",\"path\":", OptionalString(r.path),
      ",\"signature_valid\":", Bool(r.signature_valid),
      ",\"signature_error\":", OptionalString(r.signature_error),
      ",\"duplicate\":", Bool(r.duplicate),
      ",\"action\":", r.dropped ? "\"drop\"" : "\"answer\"",
      ",\"status\":", r.status,
      ",\"idempotency_key\":", OptionalString(r.idempotency_key),
      ",\"content_type\":", OptionalString(r.content_type));
  // The body goes last so a human reading the log sees the metadata first.
  if (IsValidUtf8(r.body)) {
    absl::StrAppend(&line, ",\"body\":", JsonString(r.body), "}");
  } else {
    absl::StrAppend(&line,
                    ",\"body_base64\":", JsonString(absl::Base64Escape(r.body)),
                    "}");
  }
  return line;
}

absl::StatusOr<std::unique_ptr<RequestLog>> RequestLog::Open(
    const std::string& path) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot open log ", path));
  }
  return std::unique_ptr<RequestLog>(new RequestLog(fd));
}

RequestLog::~RequestLog() { ::close(fd_); }

absl::Status RequestLog::Append(const LogRecord& record) {
  absl::MutexLock lock(&mu_);
  const std::string line = FormatLogLine(next_seq_++, record) + "\n";
  // O_APPEND plus one write per line: concurrent readers see whole lines.
  // The loop only matters for partial writes on a nearly full disk.
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot append to the request log: ",
                       n < 0 ? std::strerror(errno) : "short write"));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace outbox::sink
