// Copyright (c) edge-outbox authors.
//
// HTTP-date parsing (RFC 9110 section 5.6.7) for `Retry-After` and `Date`.

#ifndef OUTBOX_AGENT_HTTP_DATE_H_
#define OUTBOX_AGENT_HTTP_DATE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace outbox {

// Parses the three formats a recipient must accept, all in GMT:
//   IMF-fixdate  "Sun, 06 Nov 1994 08:49:37 GMT"  (what senders should send)
//   RFC 850      "Sunday, 06-Nov-94 08:49:37 GMT" (obsolete)
//   asctime      "Sun Nov  6 08:49:37 1994"       (obsolete)
// Matching is exact and case-sensitive, as the grammar is; the weekday name
// must be a real one but is not checked against the date (RFC 9110 lets a
// recipient ignore it). A two-digit RFC 850 year that would be more than 50
// years after `now` is read as the most recent past year with those digits,
// which is the RFC's rule; `now` is used for nothing else.
// Errors: kInvalidArgument for anything else, including impossible dates
// (Feb 30) and out-of-range fields. Never crashes on any input.
absl::StatusOr<absl::Time> ParseHttpDate(absl::string_view text,
                                         absl::Time now);

}  // namespace outbox

#endif  // OUTBOX_AGENT_HTTP_DATE_H_
