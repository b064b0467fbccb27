// Copyright (c) edge-outbox authors.
//
// What the agent does with an event once its sender reports how the
// delivery went, for destinations of every kind, as pure functions: no I/O,
// no clock reads. The agent passes `now` and a random source in, so every
// outcome can be tested without sockets.

#ifndef OUTBOX_AGENT_DECISION_H_
#define OUTBOX_AGENT_DECISION_H_

#include <string>

#include "absl/random/bit_gen_ref.h"
#include "absl/time/time.h"
#include "agent/retry/retry_policy.h"
#include "agent/send/sender.h"
#include "outbox/store.h"

namespace outbox {

// What the agent does after a request finished.
struct Decision {
  enum class Kind {
    kDelivered,         // MarkDelivered
    kRetry,             // RecordAttempt(error, http_status, next_attempt)
    kDeadLetter,        // MoveToDeadLetters(error)
    kPauseDestination,  // RecordAttempt, then stop sending to the destination
    kOffline,           // never reached the receiver, or TLS refused the
                        // peer before anything was sent: not an attempt
    kHoldDestination,   // the receiver refused the device, not the event
                        // (401, 403, not authorized): not an attempt; the
                        // destination holds its events and probes
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
// An answer that refuses the device rather than the event (kHoldDestination:
// HTTP 401 and 403 unless the policy's `answers` say otherwise, an MQTT or
// Kafka authorization error) is kHoldDestination: nothing is recorded, so a
// rotated secret or a clock the receiver finds stale dead-letters nothing.
// `now` is the wall-clock time of the answer.
Decision Decide(const SendResult& result, const PendingEvent& event,
                const RetryPolicy& policy, absl::Time now, absl::BitGenRef gen);

// What the store records for `decision` about `event`, decided at wall time
// `now`: kDelivered, kAttempt (a retry, or the attempt a 410 answered, due
// again at once when the destination is resumed), or kDeadLetter with its
// final attempt. REQUIRES: decision.kind is neither kOffline nor
// kHoldDestination (not attempts: nothing is recorded).
Settlement SettlementFor(const Decision& decision, PendingEvent event,
                         absl::Time now);

}  // namespace outbox

#endif  // OUTBOX_AGENT_DECISION_H_
