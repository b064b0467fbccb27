// Copyright (c) edge-outbox authors.
//
// Follows outbox-sink's request log while the sink writes it, parsing each
// request that carries an outbox-pos-sim sale.

#ifndef OUTBOX_TOOLS_AUDIT_SINK_LOG_TAIL_H_
#define OUTBOX_TOOLS_AUDIT_SINK_LOG_TAIL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::audit {

// One request as the sink logged it.
struct SinkRequest {
  int64_t seq = 0;         // the sink's line number, 1-based
  int64_t ts_ms = 0;       // when the sink received it, Unix milliseconds
  std::string id;          // webhook-id: the event id
  int status = 0;          // 0 when dropped
  bool dropped = false;    // processed, answer withheld
  bool duplicate = false;  // id already processed by this sink
  bool signature_valid = false;
  std::string method;    // "POST", "DELETE", ...
  std::string path;      // as the sink logged it
  std::string response;  // the body answered; "" when dropped
  std::string body;      // unescaped
  std::string sale;      // "sale" of the body; empty if the body has none
  int64_t n = -1;        // "n" of the body; -1 if the body has none
  // For an event that came in a batch, the batch's id and size: the sink
  // logs a batch as batch_size consecutive lines.
  std::string batch_id;
  int64_t batch_size = 0;  // 0: not in a batch

  bool ok() const { return status >= 200 && status <= 299; }
};

// Reads the lines appended to the log since the last Poll. The sink writes
// each line with one write(2), but a read may still end inside a line that
// is being written; such a tail waits for the next Poll.
// REQUIRES: External synchronization.
class SinkLogTail {
 public:
  explicit SinkLogTail(std::string path) : path_(std::move(path)) {}

  // Parses the complete lines appended since the last call.
  void Poll();

  // Every request parsed so far, in log order.
  const std::vector<SinkRequest>& requests() const { return requests_; }

 private:
  std::string path_;
  int64_t offset_ = 0;
  std::string partial_;
  std::vector<SinkRequest> requests_;
};

// Parses one log line; a field it lacks keeps its default above.
SinkRequest ParseSinkLine(const std::string& line);

}  // namespace outbox::audit

#endif  // OUTBOX_TOOLS_AUDIT_SINK_LOG_TAIL_H_
