// Copyright (c) edge-outbox authors.

#include "agent/rate_limiter.h"

#include <algorithm>

namespace outbox {

namespace {

// The events bucket holds a second's worth, and never less than one whole
// event: a request takes at least one, so a bucket of half an event (0.5/s)
// would never fill to it and nothing would ever be sent.
double EventsCapacity(const RateLimitSettings& limit) {
  return std::max(1.0, limit.events_per_second);
}

}  // namespace

RateLimiter::RateLimiter(const RateLimitSettings& limit, absl::Time now)
    : limit_(limit),
      events_(EventsCapacity(limit)),
      bytes_(static_cast<double>(limit.bytes_per_second)),
      refilled_(now) {}

void RateLimiter::Refill(absl::Time now) {
  if (now <= refilled_) return;  // a steady clock; equal in tests
  const double seconds = absl::ToDoubleSeconds(now - refilled_);
  refilled_ = now;
  if (limit_.events_per_second > 0) {
    events_ = std::min(EventsCapacity(limit_),
                       events_ + seconds * limit_.events_per_second);
  }
  if (limit_.bytes_per_second > 0) {
    const double cap = static_cast<double>(limit_.bytes_per_second);
    bytes_ = std::min(cap, bytes_ + seconds * cap);
  }
}

bool RateLimiter::MayStart(absl::Time now) {
  Refill(now);
  return (limit_.events_per_second <= 0 || events_ >= 1) &&
         (limit_.bytes_per_second <= 0 || bytes_ >= 0);
}

void RateLimiter::Took(absl::Time now, int64_t events, int64_t bytes) {
  Refill(now);
  if (limit_.events_per_second > 0) events_ -= static_cast<double>(events);
  if (limit_.bytes_per_second > 0) bytes_ -= static_cast<double>(bytes);
}

absl::Time RateLimiter::NextStart(absl::Time now) {
  if (MayStart(now)) return now;
  double wait = 0;  // seconds
  if (limit_.events_per_second > 0 && events_ < 1) {
    wait = (1 - events_) / limit_.events_per_second;
  }
  if (limit_.bytes_per_second > 0 && bytes_ < 0) {
    wait =
        std::max(wait, -bytes_ / static_cast<double>(limit_.bytes_per_second));
  }
  // Rounded up to a microsecond, so that the wake finds the bucket filled.
  return now + absl::Microseconds(static_cast<int64_t>(wait * 1e6) + 1);
}

}  // namespace outbox
