// Copyright (c) edge-outbox authors.
//
// When to retry a delivery, how long to wait, and when to give up. Pure
// functions of their arguments (randomness comes in through absl::BitGenRef),
// so the agent's schedule can be tested without clocks or sockets. Safe for
// concurrent use: nothing here has state.

#ifndef OUTBOX_AGENT_RETRY_RETRY_POLICY_H_
#define OUTBOX_AGENT_RETRY_RETRY_POLICY_H_

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace outbox {

// The retry schedule for one destination. The defaults aim at the Standard
// Webhooks recommendation (retries spanning about three days) for a small
// device talking to one or a few receivers. Offline periods are the agent's
// business (it should not attempt, and so not count attempts, while the
// device has no connectivity); these limits are about a receiver that is up
// but failing.
// What the agent does with an event after an answer.
enum class DeliveryOutcome {
  kDelivered,         // 2xx: done.
  kRetry,             // Transient: try again after RetryDelay().
  kPauseDestination,  // 410 Gone: the receiver wants no more; stop sending to
                      // this destination until an operator re-enables it.
  kDeadLetter,        // Permanent for this event: retrying cannot help.
  kHoldDestination,   // 401, 403: a verdict on the device (its credential,
                      // its clock, its rights), not on the event. Hold the
                      // destination's events, not an attempt, and probe one
                      // at a time until an answer of another kind.
};

struct RetryPolicy {
  // The ceiling of the first retry's delay; it doubles per retry. 1 s means a
  // receiver that blipped gets the event again within about a second. Default:
  // 1 second.
  absl::Duration base_delay = absl::Seconds(1);

  // The largest ceiling. With full jitter the mean wait at the cap is half of
  // it, so a receiver that comes back gets its backlog within 5 minutes on
  // average, while a dead one costs the device one request per ~5 minutes.
  // Default: 10 minutes.
  absl::Duration max_delay = absl::Minutes(10);

  // Give up after this many attempts (the first one included). Reached after
  // ~82 hours on average with the defaults above, so normally max_age ends a
  // retry sequence first; this is the backstop that still works when the
  // wall clock does not (devices without an RTC often boot in 1970 and only
  // learn the time from NTP). Default: 1000.
  int max_attempts = 1000;

  // Give up once the first attempt is this old; the spec's example schedule
  // spans ~75 hours, long enough to ride out a receiver down over a weekend.
  // Default: 72 hours.
  absl::Duration max_age = absl::Hours(72);

  // The longest `Retry-After` honoured; a larger value is cut to this. A
  // receiver asking for more than an hour is more likely misconfigured than
  // planning, and obeying it would stall events for days. Default: 1 hour.
  absl::Duration max_retry_after = absl::Hours(1);

  // How this destination reads HTTP statuses, where it differs from
  // Classify(): status (300..599) -> outcome, never kDelivered. Default:
  // empty (Classify() for all).
  absl::flat_hash_map<int, DeliveryOutcome> answers;
};

// OK, or kInvalidArgument naming the first field that is out of range:
// base_delay > 0, max_delay >= base_delay, max_attempts >= 1, max_age > 0,
// max_retry_after >= 0. The functions below never crash on an invalid policy
// (they clamp), but their answers are only meaningful for a valid one.
absl::Status ValidateRetryPolicy(const RetryPolicy& policy);

// Full-jitter exponential backoff ("Exponential Backoff And Jitter", AWS
// Architecture Blog, 2015): uniform in [0, min(max_delay, base_delay *
// 2^retry)]. `retry` is 0 for the wait after the first failed attempt, 1
// after the second, and so on; negative counts as 0 and huge values simply
// reach the cap. Jitter spreads a fleet of devices that all lost the same
// receiver, so they do not retry in lockstep when it returns.
absl::Duration BackoffDelay(const RetryPolicy& policy, int retry,
                            absl::BitGenRef gen);

// The wait before the next attempt after a kRetry outcome: the backoff, but
// at least `retry_after` (the receiver's explicit request, from
// ParseRetryAfter) cut to policy.max_retry_after. Retry-After is a floor, not
// a replacement, so "Retry-After: 0" on every 429 cannot make a hot loop.
absl::Duration RetryDelay(const RetryPolicy& policy, int retry,
                          std::optional<absl::Duration> retry_after,
                          absl::BitGenRef gen);

// Parses a `Retry-After` value (RFC 9110 section 10.2.3): delta-seconds
// ("120") or an HTTP-date in any of its three formats, with optional
// surrounding whitespace. A date is turned into a delay from `now`; a date in
// the past gives zero. Delta-seconds too large for 2^31 are read as 2^31
// seconds, as RFC 9111 tells caches to. The result is not capped: callers cap
// it (RetryDelay does, with policy.max_retry_after).
// Pass the response's `Date` header as `now` when it has one: that measures
// the delay on the receiver's clock and so cancels the device's clock error.
// Errors: kInvalidArgument for anything else (empty, negative, garbage).
absl::StatusOr<absl::Duration> ParseRetryAfter(absl::string_view header,
                                               absl::Time now);

// Classifies a final HTTP status code:
//   2xx                      -> kDelivered
//   408, 425, 429, 5xx       -> kRetry (timeouts, too early, rate limits and
//                               server errors pass; 502/504 are the spec's
//                               "receiver under load" signals)
//   401, 403                 -> kHoldDestination (the credential, the
//                               signature's timestamp or this client's
//                               rights: true of every event alike)
//   410                      -> kPauseDestination
//   3xx and every other 4xx  -> kDeadLetter. Redirects are not followed (the
//                               spec: following them loads both sides; the
//                               fix is to update the URL), and retrying the
//                               same request cannot turn a 3xx into a 2xx.
//   anything else (1xx as a final status, < 100, >= 600) -> kRetry: that is a
//                               broken hop, not the receiver's verdict on the
//                               event, and dead-lettering would lose it.
DeliveryOutcome Classify(int http_status);

// Classify(), unless `policy.answers` names `http_status`.
DeliveryOutcome ClassifyFor(int http_status, const RetryPolicy& policy);
// The meaning `policy.answers` gives the refusing MQTT PUBACK reason code
// `reason_code` (0x80..0xFF), else `table`, the built-in one's.
DeliveryOutcome ClassifyPubackFor(int reason_code, DeliveryOutcome table,
                                  const RetryPolicy& policy);

// "delivered", "retry", "pause_destination", "dead_letter" or
// "hold_destination", for logs.
absl::string_view DeliveryOutcomeName(DeliveryOutcome outcome);

// The outcome a configuration names for an answer: "retry", "dead_letter",
// "hold" or "pause". Errors: kInvalidArgument for anything else.
absl::StatusOr<DeliveryOutcome> ParseAnswerOutcome(absl::string_view name);

// True once an event should stop being retried and become a dead letter:
// `attempts` (made so far, the first included) reached policy.max_attempts,
// or its `retry_age` (see NextRetryAge) reached policy.max_age.
bool GiveUp(int attempts, absl::Duration retry_age, const RetryPolicy& policy);

// An event's retry age after an attempt at `now`: `age` so far plus the gap
// since its previous attempt at `previous` (InfinitePast: this is the
// first, which adds nothing). The gap counts at most the longest wait the
// policy itself can schedule, max(max_delay, max_retry_after), and never
// less than zero. So max_age measures time spent retrying an answering
// receiver: hours offline (which are not attempts), a device switched off,
// or a wall clock set forward by years (boards without an RTC) add at most
// one such wait, and a clock set back adds nothing.
absl::Duration NextRetryAge(absl::Duration age, absl::Time previous,
                            absl::Time now, const RetryPolicy& policy);

}  // namespace outbox

#endif  // OUTBOX_AGENT_RETRY_RETRY_POLICY_H_
