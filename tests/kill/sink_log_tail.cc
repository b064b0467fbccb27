// Copyright (c) edge-outbox authors.

#include "tests/kill/sink_log_tail.h"

#include <fcntl.h>
#include <unistd.h>

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "agent/sink/sink_process.h"

namespace outbox::testing {
namespace {

// The value of a JSON string, undoing the escapes of the sink's log writer
// that these payloads can contain (\" and \\); "" if `json` is not a string.
std::string Unquote(const std::optional<std::string>& json) {
  if (!json.has_value() || json->size() < 2 || (*json)[0] != '"') return "";
  std::string out;
  for (size_t i = 1; i + 1 < json->size(); ++i) {
    if ((*json)[i] == '\\' && i + 2 < json->size()) ++i;
    out.push_back((*json)[i]);
  }
  return out;
}

}  // namespace

SinkRequest ParseSinkLine(const std::string& line) {
  SinkRequest r;
  (void)absl::SimpleAtoi(sink::JsonField(line, "seq").value_or(""), &r.seq);
  r.id = Unquote(sink::JsonField(line, "id"));
  (void)absl::SimpleAtoi(sink::JsonField(line, "status").value_or(""),
                         &r.status);
  r.dropped = Unquote(sink::JsonField(line, "action")) == "drop";
  r.duplicate = sink::JsonField(line, "duplicate") == "true";
  r.signature_valid = sink::JsonField(line, "signature_valid") == "true";
  r.body = Unquote(sink::JsonField(line, "body"));
  // The body is itself one flat JSON object, outbox-pos-sim's payload:
  // {"sale":"till-1-7","n":7,"total_cents":107}.
  r.sale = Unquote(sink::JsonField(r.body, "sale"));
  if (!absl::SimpleAtoi(sink::JsonField(r.body, "n").value_or(""), &r.n)) {
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

}  // namespace outbox::testing
