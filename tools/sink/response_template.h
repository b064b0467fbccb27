// Copyright (c) edge-outbox authors.
//
// The JSON body templates of outbox-sink's routes (--routes): a JSON value
// whose strings may hold placeholders, rendered into a response body. Values
// are inserted as JSON values by building the document with nlohmann::json,
// never by pasting text, so a quote or control character in a request value
// cannot break the body.

#ifndef OUTBOX_TOOLS_SINK_RESPONSE_TEMPLATE_H_
#define OUTBOX_TOOLS_SINK_RESPONSE_TEMPLATE_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace outbox::sink {

// Path parameters of a matched route: "{id}" in the pattern -> the segment.
using PathParams = std::map<std::string, std::string>;

// What placeholders insert:
//   {uuid}           a random UUID, one per request (the same everywhere in
//                    one body);
//   {counter}        the route's counter: 1 for its first request, then 2...
//   {path:NAME}      the path segment matched by {NAME} in the route;
//   {request:PTR}    the value at JSON pointer PTR (RFC 6901, e.g.
//                    /order/id) in the request body.
// A string that is one placeholder becomes that value, with its JSON type (a
// number stays a number); a placeholder inside a longer string inserts a
// string value's text, or any other value as compact JSON.
struct TemplateInputs {
  const nlohmann::ordered_json* request = nullptr;  // nullptr: not JSON.
  const PathParams* path_params = nullptr;          // Must not be nullptr.
  int64_t counter = 0;
  std::string uuid;
};

// OK if every placeholder in `body` is one of the above, each pointer is
// well-formed and each {path:NAME} names one of `path_params`' keys.
// Errors: kInvalidArgument naming the placeholder and what is wrong.
absl::Status CheckTemplate(const nlohmann::ordered_json& body,
                           const PathParams& path_params);

// `body` with every placeholder replaced. Errors: kInvalidArgument when the
// request body is not JSON or has no value at a pointer (naming the pointer,
// not the body), or for a placeholder CheckTemplate would refuse.
absl::StatusOr<nlohmann::ordered_json> RenderTemplate(
    const nlohmann::ordered_json& body, const TemplateInputs& inputs);

// A random (version 4) UUID, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".
// Thread-safe.
std::string RandomUuid();

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_RESPONSE_TEMPLATE_H_
