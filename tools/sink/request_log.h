// Copyright (c) edge-outbox authors.
//
// The sink's request log: one JSON object per line, for tests to read.

#ifndef OUTBOX_TOOLS_SINK_REQUEST_LOG_H_
#define OUTBOX_TOOLS_SINK_REQUEST_LOG_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace outbox::sink {

// What the sink saw and did for one request. Optional fields are logged as
// null when absent.
struct LogRecord {
  std::optional<std::string> id;  // webhook-id
  std::optional<int64_t> webhook_timestamp;
  absl::Time received;
  std::string method;
  std::string path;
  bool signature_valid = false;
  std::optional<std::string> signature_error;
  bool duplicate = false;
  bool dropped = false;  // Connection closed without an answer.
  int status = 0;        // 0 when dropped.
  std::optional<std::string> idempotency_key;
  std::optional<std::string> content_type;
  std::optional<std::string> route;        // The --routes entry matched.
  std::optional<std::string> route_error;  // Why its template failed.
  std::optional<std::string> response;     // The body sent; none if dropped.
  // The event type: the --type-header value, or a batch line's "type".
  std::optional<std::string> type;
  // For an event that came in a batch: the batch's webhook-id and size.
  std::optional<std::string> batch_id;
  std::optional<int64_t> batch_size;
  std::string body;  // A batched event's payload.
};

// The JSON line for `record` with sequence number `seq`, without the
// newline: one object, keys in a fixed order, body last. A body that is not
// valid UTF-8 is logged as "body_base64" instead of "body"; other fields
// that are not are logged C-escaped (\xff).
std::string FormatLogLine(int64_t seq, const LogRecord& record);

// An append-only file of FormatLogLine() lines. Each line reaches the file
// in one write(2) before Append returns, so a reader never sees half a line
// and sees the line as soon as the request is answered. The file may be a
// tty (a serial port): Append then returns once the port has sent the line.
// Thread-safe.
class RequestLog {
 public:
  // Opens `path` for appending, creating it (mode 0640: bodies are in it).
  // Errors: the errno of open(2) as a status, naming the path.
  static absl::StatusOr<std::unique_ptr<RequestLog>> Open(
      const std::string& path);
  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // Assigns the next sequence number (1, 2, ...) and appends the line.
  // Errors: kUnavailable when the write fails (disk full, file system
  // gone). The sequence number is used anyway, so a gap in "seq" shows that
  // a line was lost.
  absl::Status Append(const LogRecord& record) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  RequestLog(int fd, bool tty) : fd_(fd), tty_(tty) {}

  const int fd_;
  const bool tty_;  // a serial port: Append drains it
  absl::Mutex mu_;
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_REQUEST_LOG_H_
