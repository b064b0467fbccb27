// Copyright (c) edge-outbox authors.
//
// The events an outbox carries: what a caller emits (Event), what the agent
// reads back (PendingEvent), and what is given up on (DeadLetter).

#ifndef OUTBOX_LIB_INCLUDE_OUTBOX_EVENT_H_
#define OUTBOX_LIB_INCLUDE_OUTBOX_EVENT_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace outbox {

// An outgoing event, as the caller emits it inside a Txn.
struct Event {
  // What happened, e.g. "sale.created". Required; routes the event to a
  // destination when `destination` is empty.
  std::string type;

  // The body sent to the receiver. Opaque bytes; never logged.
  std::string payload;

  // Sent as the Content-Type header.
  std::string content_type = "application/json";

  // Events with the same non-empty ordering key are delivered first-in,
  // first-out: one is not due while an earlier one with the same key is
  // still pending. Empty means no ordering constraint.
  std::string ordering_key;

  // Name of the destination to deliver to. Empty: route by `type`.
  std::string destination;

  // Not delivered before this time. Default: as soon as possible.
  absl::Time deliver_after = absl::InfinitePast();
};

// An event stored in the outbox, awaiting delivery.
struct PendingEvent {
  // Position in commit order; unique within a store, never reused.
  uint64_t seq = 0;

  // Time-ordered UUIDv7 assigned when the event was emitted. Stable across
  // retries, reopen and replay: receivers deduplicate on it.
  std::string id;

  std::string type;
  std::string payload;
  std::string content_type;
  std::string ordering_key;
  std::string destination;

  // The idempotency key of the commit that wrote the event, or empty.
  std::string idempotency_key;

  absl::Time created;       // commit time
  absl::Time next_attempt;  // not due before this time

  // Failed delivery attempts so far, and what the last one said.
  uint32_t attempts = 0;
  absl::Time first_attempt = absl::InfinitePast();  // InfinitePast: none yet
  absl::Time last_attempt = absl::InfinitePast();   // InfinitePast: none yet
  // How long the event has been retried: the gaps between its attempts,
  // each counted as the agent measured it (see AttemptRecord::retry_age), so
  // that a wall clock set forward does not age it by years at once.
  absl::Duration retry_age = absl::ZeroDuration();
  std::string last_error;
  int last_http_status = 0;  // 0: no HTTP answer
};

// An event whose delivery was given up, and why.
struct DeadLetter {
  PendingEvent event;
  std::string reason;
  absl::Time dead_at;  // the wall clock's time, for people to read
  // How long it had been dead, on the store clock (Store::StoreClockNow),
  // when it was read: what dead-letter retention measures, never a jump of
  // the wall clock.
  absl::Duration dead_for = absl::ZeroDuration();

  // True when the stored pending entry could not be decoded. The raw bytes are
  // kept in the store; only `event.seq` and `event.id` (a synthetic
  // "undecodable-<seq>") are meaningful, and it cannot be replayed.
  bool undecodable = false;

  // When `undecodable`: the stored bytes that could not be decoded, exactly as
  // found (possibly empty), for an operator or a repair tool. Else empty.
  std::string undecodable_value;
};

}  // namespace outbox

#endif  // OUTBOX_LIB_INCLUDE_OUTBOX_EVENT_H_
