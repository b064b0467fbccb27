// Copyright (c) edge-outbox authors.

#include "tools/sink/response_template.h"

#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "tools/json_bytes.h"

namespace outbox::sink {
namespace {

using Json = nlohmann::ordered_json;

// CheckTemplate renders with no request: placeholders are validated, and
// stand-in values inserted, so one parser serves both.
struct Resolver {
  const TemplateInputs& in;
  bool check_only;

  absl::StatusOr<Json> Pointer(absl::string_view text) const {
    Json::json_pointer pointer;
    try {
      pointer = Json::json_pointer(std::string(text));
    } catch (const Json::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(
          "{request:", text, "}: not a JSON pointer (want e.g. /order/id)"));
    }
    if (check_only) return Json(nullptr);
    if (in.request == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("{request:", text, "}: the request body is not JSON"));
    }
    try {
      return in.request->at(pointer);
    } catch (const Json::exception& e) {
      // out_of_range (no such member or index) or parse_error (an array
      // index that is not a number): either way nothing is there.
      return absl::InvalidArgumentError(absl::StrCat(
          "{request:", text, "}: the request body has no value there"));
    }
  }

  absl::StatusOr<Json> operator()(absl::string_view name) const {
    if (name == "uuid") return Json(in.uuid);
    if (name == "counter") return Json(in.counter);
    absl::string_view rest = name;
    if (absl::ConsumePrefix(&rest, "path:")) {
      auto it = in.path_params->find(std::string(rest));
      if (it == in.path_params->end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "{", name, "}: the route's path has no {", rest, "} segment"));
      }
      return Json(it->second);
    }
    if (absl::ConsumePrefix(&rest, "request:")) return Pointer(rest);
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown placeholder {", name,
        "} (want {uuid}, {counter}, {path:NAME} or {request:/POINTER})"));
  }
};

absl::StatusOr<Json> ExpandString(const std::string& text,
                                  const Resolver& resolve) {
  std::string joined;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find('{', pos);
    if (open == std::string::npos) {
      joined.append(text, pos, std::string::npos);
      break;
    }
    joined.append(text, pos, open - pos);
    const size_t close = text.find('}', open);
    if (close == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", text, "\": '{' without a closing '}'"));
    }
    absl::StatusOr<Json> value =
        resolve(absl::string_view(text).substr(open + 1, close - open - 1));
    if (!value.ok()) return value.status();
    if (open == 0 && close + 1 == text.size()) return *std::move(value);
    joined += value->is_string() ? value->get<std::string>() : DumpJson(*value);
    pos = close + 1;
  }
  return Json(std::move(joined));
}

absl::StatusOr<Json> Expand(const Json& node, const Resolver& resolve) {
  if (node.is_string()) {
    return ExpandString(node.get<std::string>(), resolve);
  }
  if (!node.is_structured()) return node;
  Json out = node.is_object() ? Json::object() : Json::array();
  for (auto it = node.begin(); it != node.end(); ++it) {
    absl::StatusOr<Json> value = Expand(it.value(), resolve);
    if (!value.ok()) return value.status();
    if (node.is_object()) {
      out[it.key()] = *std::move(value);
    } else {
      out.push_back(*std::move(value));
    }
  }
  return out;
}

}  // namespace

absl::Status CheckTemplate(const Json& body, const PathParams& path_params) {
  TemplateInputs stand_in;
  stand_in.path_params = &path_params;
  return Expand(body, Resolver{stand_in, /*check_only=*/true}).status();
}

absl::StatusOr<Json> RenderTemplate(const Json& body,
                                    const TemplateInputs& inputs) {
  return Expand(body, Resolver{inputs, /*check_only=*/false});
}

std::string RandomUuid() {
  absl::BitGen gen;
  const uint64_t hi = absl::Uniform<uint64_t>(gen);
  const uint64_t lo = absl::Uniform<uint64_t>(gen);
  // RFC 9562 section 5.4: version 4 in bits 48-51, variant 10 in bits 64-65.
  const uint64_t version_hi = (hi & ~0xf000ULL) | 0x4000ULL;
  const uint64_t variant_lo = (lo & ~(3ULL << 62)) | (2ULL << 62);
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", version_hi >> 32,
                         (version_hi >> 16) & 0xffff, version_hi & 0xffff,
                         variant_lo >> 48, variant_lo & 0xffffffffffffULL);
}

}  // namespace outbox::sink
