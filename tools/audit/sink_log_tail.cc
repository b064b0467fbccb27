// Copyright (c) edge-outbox authors.

#include "tools/audit/sink_log_tail.h"

#include <fcntl.h>
#include <unistd.h>

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "tools/json_fields.h"

namespace outbox::audit {
SinkRequest ParseSinkLine(const std::string& line) {
  SinkRequest r;
  (void)absl::SimpleAtoi(JsonField(line, "seq").value_or(""), &r.seq);
  (void)absl::SimpleAtoi(JsonField(line, "ts_ms").value_or(""), &r.ts_ms);
  r.id = JsonString(line, "id");
  (void)absl::SimpleAtoi(JsonField(line, "status").value_or(""), &r.status);
  r.dropped = JsonString(line, "action") == "drop";
  r.duplicate = JsonField(line, "duplicate") == "true";
  r.signature_valid = JsonField(line, "signature_valid") == "true";
  r.method = JsonString(line, "method");
  r.path = JsonString(line, "path");
  r.response = JsonString(line, "response");
  r.body = JsonString(line, "body");
  r.batch_id = JsonString(line, "batch_id");
  (void)absl::SimpleAtoi(JsonField(line, "batch_size").value_or(""),
                         &r.batch_size);
  // The body is itself one flat JSON object, outbox-pos-sim's payload:
  // {"sale":"till-1-7","n":7,"total_cents":107}.
  r.sale = JsonString(r.body, "sale");
  if (!absl::SimpleAtoi(JsonField(r.body, "n").value_or(""), &r.n)) {
    r.n = -1;
  }
  return r;
}

void SinkLogTail::Poll() {
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // Not created yet.
  char chunk[1 << 16];
  ssize_t got;
  while ((got = pread(fd, chunk, sizeof(chunk), offset_)) > 0) {
    offset_ += got;
    partial_.append(chunk, static_cast<size_t>(got));
  }
  close(fd);
  size_t start = 0;
  size_t newline;
  while ((newline = partial_.find('\n', start)) != std::string::npos) {
    requests_.push_back(ParseSinkLine(partial_.substr(start, newline - start)));
    start = newline + 1;
  }
  partial_.erase(0, start);
}

}  // namespace outbox::audit
