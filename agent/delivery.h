// Copyright (c) edge-outbox authors.
//
// One delivery, as pure functions: the HTTP request for a pending event, and
// what to do with the event once the transport reports how it went. No I/O,
// no clock reads: the agent passes `now` and a random source in, so every
// outcome can be tested without sockets.

#ifndef OUTBOX_AGENT_DELIVERY_H_
#define OUTBOX_AGENT_DELIVERY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "absl/time/time.h"
#include "agent/config.h"
#include "agent/sender.h"
#include "outbox/event.h"
#include "outbox/http_transport.h"
#include "outbox/store.h"

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
  // Sent after x-event-type, before the destination's own headers.
  std::vector<std::pair<std::string, std::string>> headers;
};

// BuildRequest's headers and the destination's settings around `parts`.
HttpRequest BuildRequestFrom(RequestParts parts, const Destination& destination,
                             absl::Time now, uint64_t tag);

// What the agent does after a request finished.
struct Decision {
  enum class Kind {
    kDelivered,         // MarkDelivered
    kRetry,             // RecordAttempt(error, http_status, next_attempt)
    kDeadLetter,        // MoveToDeadLetters(error)
    kPauseDestination,  // RecordAttempt, then stop sending to the destination
    kOffline,           // never reached the receiver, or TLS refused the
                        // peer before anything was sent: not an attempt
  };
  Kind kind = Kind::kRetry;
  std::string error;  // for the store and logs; no payload, no secrets
  int http_status = 0;
  absl::Time next_attempt = absl::InfinitePast();
  // The event's retry age after this attempt (NextRetryAge); for failed
  // attempts (kRetry, kDeadLetter, kPauseDestination).
  absl::Duration retry_age = absl::ZeroDuration();
  // kDeadLetter: the receiver refused the event (a 4xx, a PUBACK's refusal)
  // rather than its retries running out.
  bool rejected = false;
};

// Decides from `result` what happens to `event` (whose `attempts` counts the
// failed attempts before this one), for a destination of any kind. The
// receiver's verdict (result.outcome) is followed; no answer after the event
// left is retried; GiveUp() on the event's retry age (NextRetryAge) turns a
// retry into a dead letter. An event that never reached the receiver, and a
// TLS failure (kFailedPrecondition: nothing can have left), are kOffline.
// `now` is the wall-clock time of the answer.
Decision Decide(const SendResult& result, const PendingEvent& event,
                const RetryPolicy& policy, absl::Time now, absl::BitGenRef gen);

// What the store records for `decision` about `event`, decided at wall time
// `now`: kDelivered, kAttempt (a retry, or the attempt a 410 answered, due
// again at once when the destination is resumed), or kDeadLetter with its
// final attempt. REQUIRES: decision.kind != kOffline (not an attempt:
// nothing is recorded).
Settlement SettlementFor(const Decision& decision, PendingEvent event,
                         absl::Time now);

}  // namespace outbox

#endif  // OUTBOX_AGENT_DELIVERY_H_
