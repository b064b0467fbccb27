// Copyright (c) edge-outbox authors.

#include "agent/decision.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace outbox {

namespace {

// The receiver's verdict, the destination's `answers` applied: HTTP by
// status, MQTT by PUBACK reason code; Kafka by its fixed table.
DeliveryOutcome OutcomeOf(const SendResult& result, const RetryPolicy& policy) {
  if (result.http_status != 0) return ClassifyFor(result.http_status, policy);
  if (result.reason_code >= 0) {
    return ClassifyPubackFor(result.reason_code, result.outcome, policy);
  }
  return result.outcome;
}

}  // namespace

Decision Decide(const SendResult& result, const PendingEvent& event,
                const RetryPolicy& policy, absl::Time now,
                absl::BitGenRef gen) {
  Decision d;
  d.http_status = result.http_status;
  if (result.offline) {
    d.kind = Decision::Kind::kOffline;
    d.error = std::string(result.transport.message());
    return d;
  }
  if (absl::IsFailedPrecondition(result.transport)) {
    // TLS configuration or verification failed (SendResult's contract). The
    // peer is checked during the handshake, before a byte of the event is
    // written, so nothing left: not an attempt. Holding the events like an
    // unreachable receiver's means a wrong CA or an expired certificate
    // dead-letters nothing; the message says what to fix.
    d.kind = Decision::Kind::kOffline;
    d.error = absl::StrCat("TLS verification failed, nothing was sent: ",
                           result.transport.message());
    return d;
  }
  // Entries written before last_attempt existed count from their first.
  const absl::Time previous = event.last_attempt != absl::InfinitePast()
                                  ? event.last_attempt
                                  : event.first_attempt;
  d.retry_age = NextRetryAge(event.retry_age, previous, now, policy);
  std::optional<absl::Duration> retry_after;
  if (result.transport.ok()) {
    const DeliveryOutcome outcome = OutcomeOf(result, policy);
    switch (outcome) {
      case DeliveryOutcome::kDelivered:
        d.kind = Decision::Kind::kDelivered;
        return d;
      case DeliveryOutcome::kDeadLetter:
        d.kind = Decision::Kind::kDeadLetter;
        d.rejected = true;
        d.error =
            absl::StrCat(result.answer, ": the receiver rejected the event");
        return d;
      case DeliveryOutcome::kPauseDestination:
        d.kind = Decision::Kind::kPauseDestination;
        d.error = absl::StrCat(result.answer,
                               ": destination gone; paused until resumed");
        return d;
      case DeliveryOutcome::kHoldDestination:
        // Before the retry age moves: this is not an attempt.
        d.kind = Decision::Kind::kHoldDestination;
        d.retry_age = event.retry_age;
        d.error = absl::StrCat(
            result.answer,
            ": the receiver refused this device (its credential, its "
            "signature's time or its rights), not the event; holding the "
            "destination's events, probing");
        return d;
      case DeliveryOutcome::kRetry:
        d.error = result.answer;
        retry_after = result.retry_after;
        break;
    }
  } else {
    // The event left but no usable answer came back (reset, timeout after
    // sending): the receiver may have processed it, so this is a failed
    // attempt and the retry carries the same id.
    d.error = std::string(result.transport.message());
  }
  const int attempts = static_cast<int>(event.attempts) + 1;
  if (GiveUp(attempts, d.retry_age, policy)) {
    d.kind = Decision::Kind::kDeadLetter;
    d.error =
        absl::StrCat("gave up after ", attempts, " attempts, retrying for ",
                     absl::FormatDuration(d.retry_age), "; last: ", d.error);
    return d;
  }
  d.kind = Decision::Kind::kRetry;
  d.next_attempt = now + RetryDelay(policy, attempts - 1, retry_after, gen);
  return d;
}

Settlement SettlementFor(const Decision& d, PendingEvent event,
                         absl::Time now) {
  Settlement s;
  s.event = std::move(event);
  s.attempt =
      AttemptRecord{d.error, d.http_status, d.next_attempt, d.retry_age, now};
  switch (d.kind) {
    case Decision::Kind::kDelivered:
      s.kind = Settlement::Kind::kDelivered;
      break;
    case Decision::Kind::kRetry:
      s.kind = Settlement::Kind::kAttempt;
      break;
    case Decision::Kind::kPauseDestination:
      s.kind = Settlement::Kind::kAttempt;
      s.attempt.next_attempt = now;  // held by the pause, not by its due time
      break;
    case Decision::Kind::kDeadLetter:
    case Decision::Kind::kOffline:
    case Decision::Kind::kHoldDestination:
      s.kind = Settlement::Kind::kDeadLetter;
      s.attempt.next_attempt = now;
      s.reason = d.error;
      break;
  }
  return s;
}

}  // namespace outbox
