// Copyright (c) edge-outbox authors.
//
// RateLimiter: a destination's rate limit (outbox.config.RateLimit) as two
// token buckets, events and bytes, each holding one second's worth and
// refilling continuously (the events bucket never less than one event, so
// that a rate below one a second still sends). Pure: the caller passes the
// (steady) time.

#ifndef OUTBOX_AGENT_RATE_LIMITER_H_
#define OUTBOX_AGENT_RATE_LIMITER_H_

#include <cstdint>

#include "absl/time/time.h"
#include "agent/config/config.h"

namespace outbox {

// REQUIRES: External synchronization.
class RateLimiter {
 public:
  // Starts full: a second's worth may go at once. REQUIRES: limit.enabled().
  RateLimiter(const RateLimitSettings& limit, absl::Time now);

  // Whether a request may start at `now`: the events bucket holds one event
  // and the bytes bucket is not in debt.
  bool MayStart(absl::Time now);
  // A request of `events` events and `bytes` body bytes started at `now`:
  // the buckets may go into debt, which later requests wait out.
  void Took(absl::Time now, int64_t events, int64_t bytes);
  // When MayStart will be true (`now` if it is).
  absl::Time NextStart(absl::Time now);

 private:
  void Refill(absl::Time now);

  const RateLimitSettings limit_;
  double events_;  // tokens; negative: debt
  double bytes_;
  absl::Time refilled_;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_RATE_LIMITER_H_
