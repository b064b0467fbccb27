// Copyright (c) edge-outbox authors.
//
// Batched HTTP delivery, as pure functions: several pending events of one
// destination in one POST, in queue order, so that a key's events drain at
// one round trip per batch instead of one per event. No I/O, no clock reads.
//
// The wire format (docs/transports.md, "Batched HTTP"; outbox-sink reads it):
//   Content-Type: application/x-ndjson. The body is one line per event, in
//   the order given, each ending in "\n": a JSON object
//     {"id": ..., "type": ..., "ordering_key": ..., "content_type": ...,
//      "data": "<payload>"}
//   with "ordering_key" left out when it is empty, and "data_base64":
//   "<standard base64 of the payload>" instead of "data" when the payload
//   (or any of the event's other fields) is not valid UTF-8, which a JSON
//   string cannot hold. JSON escapes line breaks inside strings, so a line
//   never contains one. Fields that are not valid UTF-8 besides the payload
//   (a type, key or content type an application wrote as raw bytes) are sent
//   with U+FFFD for each bad byte.
//   webhook-id and Idempotency-Key: BatchId() of the event ids.
//   webhook-timestamp: Unix seconds of this attempt, as for one event.
//   webhook-signature: one v1 entry per secret over the whole body, exactly
//   as for one event (webhooks/signature.h), with the batch id as the id.
//   outbox-event-ids: the event ids in body order, separated by "," (ids
//   are the store's UUIDs, which hold no ",").
//   outbox-batch-size: the number of events.
//   No x-event-type (the events' types differ); then the destination's own
//   headers, as for one event.

#ifndef OUTBOX_AGENT_SEND_BATCH_REQUEST_H_
#define OUTBOX_AGENT_SEND_BATCH_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "agent/config/config.h"
#include "outbox/event.h"
#include "outbox/http_transport.h"

namespace outbox {

inline constexpr char kBatchContentType[] = "application/x-ndjson";
inline constexpr char kBatchEventIdsHeader[] = "outbox-event-ids";
inline constexpr char kBatchSizeHeader[] = "outbox-batch-size";

// "batch_" + the first 32 hex digits (128 bits) of SHA-256 over `ids`
// joined by "\n". The same ids in the same order give the same id on every
// retry, after a restart too, so a receiver deduplicating on webhook-id or
// Idempotency-Key recognises a resent batch. Any other set or order gives
// another id: a receiver that caches its answers by Idempotency-Key can
// therefore never answer a regrouped batch (one more or one fewer event)
// from the cache of an earlier one, which would acknowledge events it never
// saw. Contains no '.', as a webhook-id must not.
std::string BatchId(absl::Span<const std::string> ids);

// The NDJSON line for `event`, "\n" included (the format above).
std::string BatchLine(const PendingEvent& event);

// How many of `lines` (BatchLines, in order) join a batch that already
// holds `held_events` events with `held_bytes` of body: as many as keep it
// within `max_events` events and a body of `max_bytes` bytes. An empty
// batch takes at least one, so that an event whose line is larger than
// max_bytes goes alone rather than never; a batch that is not empty takes 0
// when the first does not fit. A max_events of 0 counts as 1.
size_t LinesThatFit(absl::Span<const std::string> lines, size_t held_events,
                    size_t held_bytes, size_t max_events, size_t max_bytes);

// The POST for `events`, in that order, to `destination` at time `now`: the
// format above, with the destination's URL, timeouts, TLS and proxy as
// BuildRequest (webhook_request.h) sets them. `body` is sent as is: the caller
// measured each event's line to pack the batch, and a line is not cheap to
// build twice (the whole payload is escaped, or base64-encoded).
// REQUIRES: `events` is not empty and holds no null; `body` is the
// BatchLine of each of them, in order, concatenated (packed with
// LinesThatFit).
HttpRequest BuildBatchRequest(const std::vector<const PendingEvent*>& events,
                              std::string body, const Destination& destination,
                              absl::Time now, uint64_t tag);

}  // namespace outbox

#endif  // OUTBOX_AGENT_SEND_BATCH_REQUEST_H_
