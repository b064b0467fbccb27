// Copyright (c) edge-outbox authors.

#include "tools/sink/routes.h"

#include <httplib.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "platform/files.h"
#include "tools/json_bytes.h"

namespace outbox::sink {
namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string>& KnownMethods() {
  static const auto* methods =
      new std::set<std::string>{"GET", "POST", "PUT", "PATCH", "DELETE"};
  return *methods;
}

absl::Status BadRoute(absl::string_view where, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", why));
}

// "{NAME}" -> NAME; "" if `segment` is not a parameter.
absl::string_view ParamName(absl::string_view segment) {
  if (!absl::ConsumePrefix(&segment, "{") ||
      !absl::ConsumeSuffix(&segment, "}")) {
    return "";
  }
  return segment;
}

bool IsParamName(absl::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_';
  });
}

// Fills route->method, segments; `params` gets the parameter names.
absl::Status ParsePattern(const std::string& text, Route* route,
                          PathParams* params) {
  const std::vector<std::string> words = absl::StrSplit(text, ' ');
  if (words.size() != 2 || !absl::StartsWith(words[1], "/")) {
    return BadRoute("route",
                    "want \"METHOD /path\", e.g. \"POST /api/billing\"");
  }
  if (KnownMethods().count(words[0]) == 0) {
    return BadRoute("route", absl::StrCat("unknown method \"", words[0],
                                          "\" (want GET, POST, PUT, PATCH or "
                                          "DELETE, in upper case)"));
  }
  route->method = words[0];
  route->segments = absl::StrSplit(absl::string_view(words[1]).substr(1), '/');
  for (const std::string& segment : route->segments) {
    const absl::string_view name = ParamName(segment);
    if (name.empty() && absl::StrContains(segment, '{')) {
      return BadRoute("route",
                      absl::StrCat("segment \"", segment,
                                   "\": a parameter is a whole segment, "
                                   "{NAME}"));
    }
    if (name.empty()) continue;
    if (!IsParamName(name)) {
      return BadRoute("route", absl::StrCat("parameter {", name,
                                            "}: want letters, digits and _"));
    }
    if (!params->emplace(std::string(name), "").second) {
      return BadRoute("route", absl::StrCat("parameter {", name, "} twice"));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseStatus(const Json& value, absl::string_view where,
                         int* status) {
  if (!value.is_number_integer() || value.get<int64_t>() < 200 ||
      value.get<int64_t>() > 599) {
    return BadRoute(where, "want an integer in [200, 599]");
  }
  *status = value.get<int>();
  return absl::OkStatus();
}

absl::Status CheckKeys(const Json& object, const std::set<std::string>& keys,
                       absl::string_view where) {
  if (!object.is_object()) return BadRoute(where, "want an object");
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (keys.count(it.key()) == 0) {
      return BadRoute(where, absl::StrCat("unknown member \"", it.key(), "\""));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseFail(const Json& object, const PathParams& params,
                       FailRule* fail) {
  OUTBOX_RETURN_IF_ERROR(
      CheckKeys(object, {"when", "in", "status", "body"}, "fail"));
  const auto when = object.find("when");
  if (when == object.end() || !when->is_string()) {
    return BadRoute("fail.when", "want a JSON pointer into the request body");
  }
  try {
    fail->pointer = Json::json_pointer(when->get<std::string>());
  } catch (const Json::exception&) {
    return BadRoute("fail.when", "not a JSON pointer (want e.g. /order/id)");
  }
  const auto in = object.find("in");
  if (in == object.end() || !in->is_array() || in->empty()) {
    return BadRoute("fail.in",
                    "want a non-empty array of the values that fail");
  }
  fail->values.assign(in->begin(), in->end());
  const auto status = object.find("status");
  if (status == object.end()) return BadRoute("fail.status", "is required");
  OUTBOX_RETURN_IF_ERROR(ParseStatus(*status, "fail.status", &fail->status));
  if (object.contains("body")) {
    fail->body = object["body"];
    absl::Status checked = CheckTemplate(*fail->body, params);
    if (!checked.ok()) return BadRoute("fail.body", checked.message());
  }
  return absl::OkStatus();
}

absl::StatusOr<Route> ParseRoute(const Json& object) {
  OUTBOX_RETURN_IF_ERROR(
      CheckKeys(object, {"route", "status", "body", "fail"}, "route entry"));
  const auto name = object.find("route");
  if (name == object.end() || !name->is_string()) {
    return BadRoute("route",
                    "want \"METHOD /path\", e.g. \"POST /api/billing\"");
  }
  Route route;
  route.name = name->get<std::string>();
  PathParams params;
  OUTBOX_RETURN_IF_ERROR(ParsePattern(route.name, &route, &params));
  if (object.contains("status")) {
    OUTBOX_RETURN_IF_ERROR(
        ParseStatus(object["status"], "status", &route.status));
  }
  if (object.contains("body")) {
    route.body = object["body"];
    absl::Status checked = CheckTemplate(*route.body, params);
    if (!checked.ok()) return BadRoute("body", checked.message());
  }
  if (object.contains("fail")) {
    route.fail.emplace();
    OUTBOX_RETURN_IF_ERROR(ParseFail(object["fail"], params, &*route.fail));
  }
  return route;
}

absl::StatusOr<std::vector<Route>> ParseRoutes(absl::string_view text) {
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                      /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const Json::parse_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("not JSON (", e.what(), ")"));
  }
  if (!doc.is_object() || !doc.contains("routes") ||
      !doc["routes"].is_array() || doc.size() != 1) {
    return absl::InvalidArgumentError(
        "want an object with one member, \"routes\": [...]");
  }
  std::vector<Route> routes;
  std::set<std::string> seen;
  for (size_t i = 0; i < doc["routes"].size(); ++i) {
    absl::StatusOr<Route> route = ParseRoute(doc["routes"][i]);
    const std::string where = absl::StrCat("routes[", i, "]");
    if (!route.ok()) return BadRoute(where, route.status().message());
    if (!seen.insert(route->name).second) {
      return BadRoute(where, absl::StrCat("\"", route->name, "\" twice"));
    }
    routes.push_back(*std::move(route));
  }
  return routes;
}

// True when the request's value at rule.pointer is one of rule.values.
bool Fails(const FailRule& rule, const Json& request) {
  try {
    const Json& value = request.at(rule.pointer);
    return std::find(rule.values.begin(), rule.values.end(), value) !=
           rule.values.end();
  } catch (const Json::exception&) {
    return false;  // Nothing at the pointer: the request does not fail.
  }
}

}  // namespace

absl::StatusOr<RouteTable> RouteTable::Parse(absl::string_view text,
                                             absl::string_view source) {
  absl::StatusOr<std::vector<Route>> routes = ParseRoutes(text);
  if (!routes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", routes.status().message()));
  }
  RouteTable table;
  table.routes_ = *std::move(routes);
  return table;
}

absl::StatusOr<RouteTable> RouteTable::Load(const std::string& path) {
  ReadFileOptions options;
  options.what = "routes file";
  absl::StatusOr<std::string> text = ReadFileChecked(path, options);
  if (!text.ok()) return text.status();
  return Parse(*text, absl::StrCat("routes file ", path));
}

std::optional<RouteMatch> RouteTable::Match(absl::string_view method,
                                            absl::string_view raw_path) const {
  if (!absl::ConsumePrefix(&raw_path, "/")) return std::nullopt;
  std::vector<std::string> segments;
  for (absl::string_view s : absl::StrSplit(raw_path, '/')) {
    segments.push_back(httplib::detail::decode_url(std::string(s), false));
  }
  for (size_t i = 0; i < routes_.size(); ++i) {
    const Route& route = routes_[i];
    if (route.method != method || route.segments.size() != segments.size()) {
      continue;
    }
    RouteMatch match{i, &route, {}};
    bool matched = true;
    for (size_t k = 0; k < segments.size() && matched; ++k) {
      const absl::string_view name = ParamName(route.segments[k]);
      if (!name.empty()) {
        match.params[std::string(name)] = segments[k];
      } else {
        matched = route.segments[k] == segments[k];
      }
    }
    if (matched) return match;
  }
  return std::nullopt;
}

std::set<std::string> RouteTable::Methods() const {
  std::set<std::string> methods;
  for (const Route& route : routes_) methods.insert(route.method);
  return methods;
}

RouteAnswer AnswerRoute(const RouteMatch& match, absl::string_view request_body,
                        int64_t counter, const std::string& uuid) {
  const Route& route = *match.route;
  const Json parsed = Json::parse(request_body.begin(), request_body.end(),
                                  /*cb=*/nullptr, /*allow_exceptions=*/false);
  const Json* request = parsed.is_discarded() ? nullptr : &parsed;
  RouteAnswer answer;
  answer.status = route.status;
  const std::optional<Json>* body = &route.body;
  if (route.fail.has_value() && request != nullptr &&
      Fails(*route.fail, *request)) {
    answer.status = route.fail->status;
    body = &route.fail->body;
  }
  if (!body->has_value()) {
    answer.body = absl::StrCat(answer.status, "\n");
    answer.content_type = "text/plain";
    return answer;
  }
  TemplateInputs inputs{request, &match.params, counter, uuid};
  absl::StatusOr<Json> rendered = RenderTemplate(**body, inputs);
  answer.content_type = "application/json";
  if (!rendered.ok()) {
    answer.status = 500;
    answer.error = std::string(rendered.status().message());
    answer.body = DumpJson(Json{{"error", *answer.error}});
    return answer;
  }
  answer.body = DumpJson(*rendered);
  return answer;
}

}  // namespace outbox::sink
