// Copyright (c) edge-outbox authors.
//
// Event ids: UUIDv7 (RFC 9562), "0190a7f3-5c1e-7abc-8def-0123456789ab".
// The first 48 bits are the Unix time in milliseconds, so ids sort by
// creation time; within one millisecond a 12-bit counter keeps them strictly
// increasing in this process (RFC 9562 method 1); 62 random bits make ids
// from different devices collide with negligible probability.

#ifndef OUTBOX_LIB_EVENT_ID_H_
#define OUTBOX_LIB_EVENT_ID_H_

#include <string>

#include "absl/time/time.h"

namespace outbox {

// Returns a new UUIDv7 for time `now`. Strictly greater (as a string) than
// every id returned before in this process, even if `now` goes backwards.
// Thread-safe.
std::string NewEventId(absl::Time now);

}  // namespace outbox

#endif  // OUTBOX_LIB_EVENT_ID_H_
