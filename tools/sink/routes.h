// Copyright (c) edge-outbox authors.
//
// outbox-sink's routes file (--routes): per method and path pattern, the
// answer to give, so one sink can play several services (seed 003's
// inventory, fraud check, shipping and billing). The format is in
// SinkUsage() (--help) and tools/sink/testdata/seed003_routes.json.

#ifndef OUTBOX_TOOLS_SINK_ROUTES_H_
#define OUTBOX_TOOLS_SINK_ROUTES_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "tools/sink/response_template.h"

namespace outbox::sink {

// Answer `status` (and `body`) instead when the request's value at
// `pointer` equals one of `values`: a test picks the failure per request.
struct FailRule {
  nlohmann::ordered_json::json_pointer pointer;
  std::vector<nlohmann::ordered_json> values;
  int status = 422;
  std::optional<nlohmann::ordered_json> body;
};

struct Route {
  std::string name;    // "DELETE /inventory/{id}", as written; logged.
  std::string method;  // Upper case.
  // The pattern's segments between '/', "{NAME}" for a parameter.
  std::vector<std::string> segments;
  int status = 200;
  std::optional<nlohmann::ordered_json> body;  // A template; none: text.
  std::optional<FailRule> fail;
};

struct RouteMatch {
  size_t index = 0;  // In RouteTable::routes().
  const Route* route = nullptr;
  PathParams params;
};

// What a route answers to one request.
struct RouteAnswer {
  int status = 200;
  std::string body;
  std::string content_type;
  // Why the template could not be rendered (then status is 500); logged.
  std::optional<std::string> error;
};

// The routes of one file, in file order. Immutable after Load: thread-safe.
class RouteTable {
 public:
  // Reads and checks the file (JSON; // and /* */ comments allowed).
  // Errors: kInvalidArgument naming the file, the route and what is wrong;
  // kNotFound / kPermissionDenied when it cannot be read.
  static absl::StatusOr<RouteTable> Load(const std::string& path);
  // The same for `text`, errors naming `source`.
  static absl::StatusOr<RouteTable> Parse(absl::string_view text,
                                          absl::string_view source);

  // The first route (in file order) for `method` whose pattern matches
  // `raw_path`: the request path as sent, still percent-encoded, so that an
  // encoded '/' (%2F) stays inside its segment. Parameters are decoded.
  std::optional<RouteMatch> Match(absl::string_view method,
                                  absl::string_view raw_path) const;

  const std::vector<Route>& routes() const { return routes_; }
  // The methods that have at least one route.
  std::set<std::string> Methods() const;

 private:
  std::vector<Route> routes_;
};

// Renders `match`'s answer for `request_body`. `counter` and `uuid` feed the
// template's {counter} and {uuid}. A template that cannot be rendered (say
// a pointer with nothing there) gives 500 with a JSON {"error": ...} body.
RouteAnswer AnswerRoute(const RouteMatch& match, absl::string_view request_body,
                        int64_t counter, const std::string& uuid);

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_ROUTES_H_
