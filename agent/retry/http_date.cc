// Copyright (c) edge-outbox authors.

#include "agent/retry/http_date.h"

#include <curl/curl.h>

#include <ctime>
#include <string>

#include "absl/status/status.h"

namespace outbox {

absl::StatusOr<absl::Time> ParseHttpDate(absl::string_view text) {
  // curl_getdate reads a C string: a NUL would end the value early and let
  // the part before it pass for the whole header.
  if (text.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("HTTP-date contains a NUL byte");
  }
  const std::string value(text);
  const time_t t = curl_getdate(value.c_str(), /*unused=*/nullptr);
  // -1 is curl's only failure value: it returns the one real date that
  // would give it, 1969-12-31T23:59:59Z, as 0.
  if (t == -1) {
    return absl::InvalidArgumentError(
        "not an HTTP-date (expected e.g. \"Sun, 06 Nov 1994 08:49:37 GMT\")");
  }
  return absl::FromTimeT(t);
}

}  // namespace outbox
