// Copyright (c) edge-outbox authors.
//
// HTTP-date parsing (RFC 9110 section 5.6.7) for `Retry-After`, by libcurl's
// curl_getdate(): the parser curl itself uses for Date, Expires, cookies and
// If-Modified-Since.

#ifndef OUTBOX_AGENT_RETRY_HTTP_DATE_H_
#define OUTBOX_AGENT_RETRY_HTTP_DATE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace outbox {

// Parses the three formats a recipient must accept:
//   IMF-fixdate  "Sun, 06 Nov 1994 08:49:37 GMT"  (what senders should send)
//   RFC 850      "Sunday, 06-Nov-94 08:49:37 GMT" (obsolete; years 00..70
//                                                   are 20xx, 71..99 19xx)
//   asctime      "Sun Nov  6 08:49:37 1994"       (obsolete)
// and, being robust as RFC 9110 encourages, what curl also reads: any case,
// other zone names and numeric offsets, one-digit days, no seconds or no
// time at all (midnight). A day
// past the month's end rolls over (Feb 30 is Mar 2), and text after a
// complete date is ignored.
// Where time_t has 32 bits (armhf on Debian 12), a date from 2038 on or
// before 1903 cannot be represented and is refused like text that is no
// date; elsewhere years from 1583 on parse. A Retry-After that far off is a
// misconfigured receiver either way (RetryDelay caps any wait at
// max_retry_after), so refusing it only costs an early retry.
// Thread-safe: curl_getdate keeps no state and needs no curl_global_init.
// Errors: kInvalidArgument for anything else: no date in the text, a field
// out of range (hour 24, minute 60, second 61, day 0 or 32), a NUL byte.
absl::StatusOr<absl::Time> ParseHttpDate(absl::string_view text);

}  // namespace outbox

#endif  // OUTBOX_AGENT_RETRY_HTTP_DATE_H_
