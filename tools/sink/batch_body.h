// Copyright (c) edge-outbox authors.
//
// The body of a batched delivery (agent/send/batch_request.h has the format):
// one NDJSON line per event, checked against the outbox-event-ids header.

#ifndef OUTBOX_TOOLS_SINK_BATCH_BODY_H_
#define OUTBOX_TOOLS_SINK_BATCH_BODY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace outbox::sink {

// One event of a batch, as if it had come alone.
struct BatchEvent {
  std::string id;
  std::string type;
  std::string ordering_key;  // "" when the line has none
  std::string content_type;
  std::string data;  // the payload, decoded from data_base64 if need be
};

// True if a request with this Content-Type and outbox-event-ids header is a
// batch: media type application/x-ndjson (parameters and case ignored) and
// the header present.
bool IsBatch(const std::optional<std::string>& content_type,
             const std::optional<std::string>& event_ids);

// The events of `body`, in order. `event_ids` is the outbox-event-ids
// header; `batch_size`, the outbox-batch-size header, is checked when
// present. Errors: kInvalidArgument saying what is wrong, naming lines by
// number (1-based) and never quoting the body: a line that is not a JSON
// object, lacks "id", "type" or "content_type" as strings, or has neither
// "data" (a string) nor "data_base64" (valid base64), or both; a body that
// is empty or does not end in "\n"; ids that differ from the header's, in
// order; a batch size that is not the number of lines.
absl::StatusOr<std::vector<BatchEvent>> ParseBatch(
    absl::string_view body, absl::string_view event_ids,
    const std::optional<std::string>& batch_size);

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_BATCH_BODY_H_
