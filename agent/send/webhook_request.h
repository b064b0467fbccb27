// Copyright (c) edge-outbox authors.
//
// The webhook request for a pending event, as pure functions: the Standard
// Webhooks headers and signature around the body, and the destination's
// connection settings. No I/O, no clock reads: the caller passes `now`, so
// every header can be tested without sockets. Used by HttpSender (one event
// per POST), batches (batch_request.h) and workflow steps (workflow/plan.h).

#ifndef OUTBOX_AGENT_SEND_WEBHOOK_REQUEST_H_
#define OUTBOX_AGENT_SEND_WEBHOOK_REQUEST_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "agent/config/config.h"
#include "outbox/http_transport.h"
#include "outbox/store.h"
#include "platform/body_coding.h"

namespace outbox {

// Extra header naming the event type, so receivers (and outbox-sink) can
// route without parsing the body.
inline constexpr char kEventTypeHeader[] = "x-event-type";

// The POST for `event` to `destination` at time `now`: Content-Type,
// webhook-id (the event id, stable across retries), webhook-timestamp,
// webhook-signature (one v1 entry per secret; omitted without secrets),
// Idempotency-Key (the event id again, for receivers that dedup on that
// header), x-event-type, then the destination's own headers.
HttpRequest BuildRequest(const PendingEvent& event,
                         const Destination& destination, absl::Time now,
                         uint64_t tag);

// What BuildRequestFrom sends: a workflow step's request has its own id,
// URL, method and body; a batch (batch_request.h) has no single type and
// headers of its own.
struct RequestParts {
  std::string id;            // webhook-id and Idempotency-Key
  std::string type;          // x-event-type; empty: no such header
  std::string content_type;  // empty: application/octet-stream
  std::string url;
  std::string method = "POST";
  std::string body;
  // Content-Encoding: the body is sent compressed with it, and signed before
  // (the signature covers what the receiver reads once it decoded it).
  BodyCoding coding = BodyCoding::kIdentity;
  // Sent after x-event-type, before the destination's own headers.
  std::vector<std::pair<std::string, std::string>> headers;
};

// BuildRequest's headers and the destination's settings around `parts`.
HttpRequest BuildRequestFrom(RequestParts parts, const Destination& destination,
                             absl::Time now, uint64_t tag);

}  // namespace outbox

#endif  // OUTBOX_AGENT_SEND_WEBHOOK_REQUEST_H_
