// Copyright (c) edge-outbox authors.

#include "agent/expr/template.h"

#include <climits>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "curl/curl.h"
#include "nlohmann/json.hpp"

namespace outbox::workflow {
namespace {

using Json = nlohmann::json;

constexpr absl::string_view kOpen = "{{";
constexpr absl::string_view kClose = "}}";

// The placeholder as written, for messages: "{{ref}}" or "{name}".
std::string Label(const Template::Part& part) {
  if (!part.name.empty()) return absl::StrCat("{", part.name, "}");
  return absl::StrCat("{{", part.ref.text, "}}");
}

// Whether JSON text read so far ends inside a string literal. Only the
// literals of a payload template are fed: a placeholder inside a string
// adds escaped text, which never ends the string.
struct JsonStringScan {
  bool in_string = false;
  bool escaped = false;  // the last byte was a backslash inside a string

  void Feed(absl::string_view text) {
    for (char c : text) {
      if (escaped) {
        escaped = false;
      } else if (in_string && c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = !in_string;
      }
    }
  }
};

// `tmpl` with every placeholder replaced by `stand_in`, or by "x" inside a
// string.
std::string WithStandIn(const Template& tmpl, absl::string_view stand_in) {
  std::string out;
  for (const Template::Part& part : tmpl.parts) {
    absl::StrAppend(&out, part.literal,
                    !part.has_ref    ? ""
                    : part.in_string ? "x"
                                     : stand_in);
  }
  return out;
}

// A placeholder outside strings is valid where any JSON value is: a string
// stand-in catches one glued to a number, a number stand-in one in a key's
// place. Any value's JSON text is then as valid there as both stand-ins.
// Inside a string, any escaped text is as valid as "x".
absl::Status CheckPayloadShape(const Template& tmpl) {
  for (absl::string_view stand_in : {"\"x\"", "0"}) {
    if (!Json::accept(WithStandIn(tmpl, stand_in))) {
      return absl::InvalidArgumentError(
          "the payload template is not JSON with a value in place of each "
          "placeholder (a placeholder is a whole JSON value, "
          "{\"id\": {{response:step:/id}}}, or part of a string, "
          "{\"id\": \"ORD-{{request:/id}}\"})");
    }
  }
  return absl::OkStatus();
}

// The text a placeholder inside a JSON string gets for `value`: a string
// escaped as JSON without its quotes, a number or boolean as its JSON text.
absl::StatusOr<std::string> InStringText(const Json& value,
                                         const Template::Part& part) {
  if (value.is_number() || value.is_boolean()) return value.dump();
  if (!value.is_string()) {
    return absl::FailedPreconditionError(absl::StrCat(
        Label(part), ": the value is ", value.type_name(),
        ", which cannot go inside a JSON string (only a string, number or "
        "boolean; for a whole value, write the placeholder outside quotes)"));
  }
  // Parsed documents hold valid UTF-8 only; `replace` just keeps dump()
  // from ever throwing.
  const std::string quoted = value.dump(-1, ' ', /*ensure_ascii=*/false,
                                        Json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

// The text a payload placeholder gets for `value`.
absl::StatusOr<std::string> PayloadText(const Json& value,
                                        const Template::Part& part) {
  if (part.in_string) return InStringText(value, part);
  // nlohmann writes the JSON text, quotes and escapes included.
  return value.dump(-1, ' ', /*ensure_ascii=*/false,
                    Json::error_handler_t::replace);
}

// The text a URL gets for `value`, before percent-encoding.
absl::StatusOr<std::string> UrlText(const Json& value,
                                    const Template::Part& part) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number() || value.is_boolean()) return value.dump();
  return absl::FailedPreconditionError(
      absl::StrCat(Label(part), ": the value is ", value.type_name(),
                   ", which a URL cannot hold (only a string, number or "
                   "boolean)"));
}

// Where the next placeholder in `text` opens: at "{{", or at "{" followed by
// a value name and "}". Other braces (a JSON object's) are text.
size_t NextOpen(absl::string_view text) {
  for (size_t i = text.find('{'); i != absl::string_view::npos;
       i = text.find('{', i + 1)) {
    if (absl::StartsWith(text.substr(i), kOpen)) return i;
    const size_t close = text.find('}', i + 1);
    if (close != absl::string_view::npos &&
        IsValueName(text.substr(i + 1, close - i - 1))) {
      return i;
    }
  }
  return absl::string_view::npos;
}

// Reads the placeholder `text` starts with (NextOpen found it) into `part`
// and returns its length.
absl::StatusOr<size_t> ReadPlaceholder(absl::string_view text,
                                       const NamedValues& names,
                                       Template::Part* part) {
  part->has_ref = true;
  if (absl::StartsWith(text, kOpen)) {
    const size_t close = text.find(kClose, kOpen.size());
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError("a \"{{\" is not closed by \"}}\"");
    }
    absl::StatusOr<ValueRef> ref =
        ParseValueRef(text.substr(kOpen.size(), close - kOpen.size()));
    if (!ref.ok()) return ref.status();
    part->ref = *std::move(ref);
    return close + kClose.size();
  }
  const size_t close = text.find('}');
  part->name = std::string(text.substr(1, close - 1));
  auto it = names.find(part->name);
  if (it == names.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("{", part->name,
                     "} is not declared: name it in the `extract` of this "
                     "step's revert or of an earlier step (or write a "
                     "reference, {{response:<step>:<path>}})"));
  }
  part->ref = it->second;
  return close + 1;
}

}  // namespace

absl::StatusOr<Template> ParseTemplate(absl::string_view text,
                                       Template::Kind kind,
                                       const NamedValues& names) {
  Template tmpl;
  tmpl.kind = kind;
  JsonStringScan scan;
  while (true) {
    const size_t open = NextOpen(text);
    Template::Part part;
    part.literal = std::string(text.substr(0, open));
    if (open == absl::string_view::npos) {
      tmpl.parts.push_back(std::move(part));
      break;
    }
    if (kind == Template::Kind::kPayload) {
      scan.Feed(part.literal);
      if (scan.escaped) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the placeholder at offset ", open,
            " follows a backslash, which would escape its first character"));
      }
      part.in_string = scan.in_string;
    }
    absl::StatusOr<size_t> size =
        ReadPlaceholder(text.substr(open), names, &part);
    if (!size.ok()) return size.status();
    tmpl.parts.push_back(std::move(part));
    text.remove_prefix(open + *size);
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
          absl::StrCat(Label(part), ": ", value.status().message()));
    }
    if (tmpl.kind == Template::Kind::kPayload) {
      absl::StatusOr<std::string> text = PayloadText(*value, part);
      if (!text.ok()) return text.status();
      out += *text;
      continue;
    }
    absl::StatusOr<std::string> text = UrlText(*value, part);
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
