// Copyright (c) edge-outbox authors.
//
// Reading the headers of an HttpRequest the agent built, as a receiver
// would: names compared case-insensitively.

#ifndef OUTBOX_TESTS_TESTING_REQUEST_HEADERS_H_
#define OUTBOX_TESTS_TESTING_REQUEST_HEADERS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "outbox/http_transport.h"

namespace outbox::testing {

// Every value of header `name` in `request`, in order.
inline std::vector<std::string> HeaderValues(const HttpRequest& request,
                                             absl::string_view name) {
  std::vector<std::string> values;
  for (const auto& [n, v] : request.headers) {
    if (absl::EqualsIgnoreCase(n, name)) values.push_back(v);
  }
  return values;
}

// The first value of header `name`, or nullopt if `request` has none.
inline std::optional<std::string> HeaderValue(const HttpRequest& request,
                                              absl::string_view name) {
  std::vector<std::string> values = HeaderValues(request, name);
  if (values.empty()) return std::nullopt;
  return values.front();
}

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_REQUEST_HEADERS_H_
