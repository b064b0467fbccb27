// Copyright (c) edge-outbox authors.

#include "agent/workflow/template.h"

#include <climits>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "curl/curl.h"
#include "nlohmann/json.hpp"

namespace outbox::workflow {
namespace {

using Json = nlohmann::json;

constexpr absl::string_view kOpen = "{{";
constexpr absl::string_view kClose = "}}";

// `tmpl` with every placeholder replaced by `stand_in`.
std::string WithStandIn(const Template& tmpl, absl::string_view stand_in) {
  std::string out;
  for (const Template::Part& part : tmpl.parts) {
    absl::StrAppend(&out, part.literal, part.has_ref ? stand_in : "");
  }
  return out;
}

// A placeholder is valid where any JSON value is: a string stand-in catches
// one inside quotes or glued to a number, a number stand-in one in a key's
// place. Any value's JSON text is then as valid there as both stand-ins.
absl::Status CheckPayloadShape(const Template& tmpl) {
  for (absl::string_view stand_in : {"\"x\"", "0"}) {
    if (!Json::accept(WithStandIn(tmpl, stand_in))) {
      return absl::InvalidArgumentError(
          "the payload template is not JSON with a value in place of each "
          "placeholder (write {\"id\": {{response:step:/id}}}: a placeholder "
          "is a whole JSON value, never inside quotes)");
    }
  }
  return absl::OkStatus();
}

// The text a URL gets for `value`, before percent-encoding.
absl::StatusOr<std::string> UrlText(const Json& value, const ValueRef& ref) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number() || value.is_boolean()) return value.dump();
  return absl::FailedPreconditionError(
      absl::StrCat("{{", ref.text, "}}: the value is ", value.type_name(),
                   ", which a URL cannot hold (only a string, number or "
                   "boolean)"));
}

}  // namespace

absl::StatusOr<Template> ParseTemplate(absl::string_view text,
                                       Template::Kind kind) {
  Template tmpl;
  tmpl.kind = kind;
  while (true) {
    const size_t open = text.find(kOpen);
    Template::Part part;
    part.literal = std::string(text.substr(0, open));
    if (open == absl::string_view::npos) {
      tmpl.parts.push_back(std::move(part));
      break;
    }
    const size_t close = text.find(kClose, open + kOpen.size());
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the \"{{\" at offset ", open, " is not closed by \"}}\""));
    }
    absl::StatusOr<ValueRef> ref = ParseValueRef(
        text.substr(open + kOpen.size(), close - open - kOpen.size()));
    if (!ref.ok()) return ref.status();
    part.has_ref = true;
    part.ref = *std::move(ref);
    tmpl.parts.push_back(std::move(part));
    text.remove_prefix(close + kClose.size());
  }
  if (kind == Template::Kind::kPayload) {
    absl::Status shape = CheckPayloadShape(tmpl);
    if (!shape.ok()) return shape;
  }
  return tmpl;
}

std::vector<const ValueRef*> References(const Template& tmpl) {
  std::vector<const ValueRef*> refs;
  for (const Template::Part& part : tmpl.parts) {
    if (part.has_ref) refs.push_back(&part.ref);
  }
  return refs;
}

absl::StatusOr<std::string> Fill(const Template& tmpl,
                                 ValueResolver& resolver) {
  std::string out;
  for (const Template::Part& part : tmpl.parts) {
    out += part.literal;
    if (!part.has_ref) continue;
    absl::StatusOr<Json> value = resolver.Resolve(part.ref);
    if (!value.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("{{", part.ref.text, "}}: ", value.status().message()));
    }
    if (tmpl.kind == Template::Kind::kPayload) {
      // nlohmann writes the JSON text, quotes and escapes included. Parsed
      // documents hold valid UTF-8 only; `replace` just keeps dump() from
      // ever throwing.
      out += value->dump(-1, ' ', /*ensure_ascii=*/false,
                         Json::error_handler_t::replace);
      continue;
    }
    absl::StatusOr<std::string> text = UrlText(*value, part.ref);
    if (!text.ok()) return text.status();
    absl::StatusOr<std::string> encoded = PercentEncode(*text);
    if (!encoded.ok()) return encoded.status();
    out += *encoded;
  }
  return out;
}

absl::StatusOr<std::string> PercentEncode(absl::string_view bytes) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("value too long to percent-encode");
  }
  // curl reads a length of 0 as "use strlen()".
  if (bytes.empty()) return std::string();
  // Since curl 7.82 the handle is unused and may be null. curl keeps
  // exactly RFC 3986's unreserved bytes and writes the rest as %XX.
  char* escaped =
      curl_easy_escape(nullptr, bytes.data(), static_cast<int>(bytes.size()));
  if (escaped == nullptr) {
    return absl::ResourceExhaustedError("out of memory percent-encoding");
  }
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

}  // namespace outbox::workflow
