// Copyright (c) edge-outbox authors.

#include "tools/sink/request_log.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "platform/posix_error.h"
#include "tools/json_bytes.h"

namespace outbox::sink {
namespace {

// Header values come from the network and may hold any byte; a value that
// is not UTF-8 is logged C-escaped, which keeps the line valid JSON.
nlohmann::ordered_json OptionalString(const std::optional<std::string>& s) {
  if (!s.has_value()) return nullptr;
  if (IsValidUtf8(*s)) return *s;
  return absl::CHexEscape(*s);
}

}  // namespace

std::string FormatLogLine(int64_t seq, const LogRecord& r) {
  nlohmann::ordered_json line = {
      {"seq", seq},
      {"id", OptionalString(r.id)},
      {"webhook_timestamp", nullptr},
      {"ts_ms", absl::ToUnixMillis(r.received)},
      {"method", OptionalString(r.method)},
      {"path", OptionalString(r.path)},
      {"signature_valid", r.signature_valid},
      {"signature_error", OptionalString(r.signature_error)},
      {"duplicate", r.duplicate},
      {"action", r.dropped ? "drop" : "answer"},
      {"status", r.status},
      {"idempotency_key", OptionalString(r.idempotency_key)},
      {"content_type", OptionalString(r.content_type)},
      {"route", OptionalString(r.route)},
      {"route_error", OptionalString(r.route_error)},
      {"response", OptionalString(r.response)},
      {"type", OptionalString(r.type)},
      {"batch_id", OptionalString(r.batch_id)},
      {"batch_size", nullptr},
  };
  if (r.batch_size.has_value()) line["batch_size"] = *r.batch_size;
  if (r.webhook_timestamp.has_value()) {
    line["webhook_timestamp"] = *r.webhook_timestamp;
  }
  // The body goes last so a human reading the log sees the metadata first.
  SetBytes("body", r.body, &line);
  return DumpJson(line);
}

absl::StatusOr<std::unique_ptr<RequestLog>> RequestLog::Open(
    const std::string& path) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) {
    return PosixError(absl::StrCat("cannot open log ", path), errno);
  }
  return std::unique_ptr<RequestLog>(new RequestLog(fd, isatty(fd) == 1));
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
    if (n < 0) return PosixError("cannot append to the request log", errno);
    if (n == 0) {
      return absl::UnavailableError(
          "cannot append to the request log: short write");
    }
    done += static_cast<size_t>(n);
  }
  // On a serial port (tests/vm's guest logs to one the host writes to a
  // file) write(2) returns once the line is in the tty's buffer; the answer
  // that follows must not overtake it, or a power cut could lose the line
  // of a request the sender saw answered. tcdrain returns when the port
  // has sent it.
  if (tty_ && ::tcdrain(fd_) != 0) {
    return PosixError("cannot drain the request log's tty", errno);
  }
  return absl::OkStatus();
}

}  // namespace outbox::sink
