// Copyright (c) edge-outbox authors.
//
// Templates of a workflow step's revert (issue 13, seed 003's revert block):
// text with placeholders "{{<value reference>}}" (agent/expr/value_ref.h),
// e.g. "https://inv.example/api/{{response:reserve:/reservationId}}/release".
// "{{" always opens a placeholder; there is no escape for a literal "{{".
// "{name}" (a value name, [A-Za-z_][A-Za-z0-9_]*, between single braces)
// is a placeholder for a named value of the step's or its revert's
// `extract` (seed 003's {shipmentId}); an undeclared one is refused. Other
// braces, a JSON object's, are text.
//
// Filling never pastes a value in unescaped (the seed's bug):
//   - URL templates percent-encode the value: every byte outside
//     RFC 3986's unreserved set (A-Z a-z 0-9 - . _ ~) becomes %XX, so a value
//     cannot add a path segment, a query or a fragment. Strings are encoded as
//     their bytes, numbers and booleans as their JSON text; null, arrays and
//     objects cannot go into a URL.
//   - Payload templates: a placeholder where a JSON value stands,
//     {"id": {{response:reserve:/id}}}, is replaced by the value's JSON text
//     (strings quoted and escaped by nlohmann; any type). A placeholder
//     inside a JSON string, {"id": "ORD-{{request:/id}}"}, is replaced by a
//     string's JSON escaping without its quotes, or a number's or boolean's
//     JSON text; null, arrays and objects fail the fill there. A payload
//     template is checked when parsed: it must be JSON with any value in
//     place of its placeholders.
// A placeholder whose value is missing fails the fill (kFailedPrecondition:
// this revert cannot be built); it never becomes an empty string.

#ifndef OUTBOX_AGENT_EXPR_TEMPLATE_H_
#define OUTBOX_AGENT_EXPR_TEMPLATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/expr/value_ref.h"

namespace outbox::workflow {

// A parsed template. Plain data; build it with ParseTemplate.
struct Template {
  enum class Kind { kUrl, kPayload };
  struct Part {
    std::string literal;   // text before the placeholder (may be empty)
    bool has_ref = false;  // false only for the trailing literal
    ValueRef ref;
    bool in_string = false;  // kPayload: the placeholder is inside a string
    std::string name;        // for "{name}": the named value; else empty
  };
  Kind kind = Kind::kUrl;
  std::vector<Part> parts;
};

// Parses `text`; "{name}" reads names[name]. Errors: kInvalidArgument for
// an unclosed "{{", a bad reference, a name not in `names`, or (kPayload)
// text that would not be JSON once filled.
absl::StatusOr<Template> ParseTemplate(absl::string_view text,
                                       Template::Kind kind,
                                       const NamedValues& names = {});

// The references `tmpl` uses, in order (for the config checker).
std::vector<const ValueRef*> References(const Template& tmpl);

// `tmpl` with every placeholder replaced by its value from `resolver`,
// encoded as the kind requires. Errors: kFailedPrecondition when a value is
// missing, a document is not JSON, or a value in a URL or inside a JSON
// string is not a string, number or boolean; the message names the
// placeholder, never the value.
absl::StatusOr<std::string> Fill(const Template& tmpl, ValueResolver& resolver);

// `bytes` with every byte outside RFC 3986's unreserved set as %XX
// (uppercase hex), via libcurl's curl_easy_escape. Errors: kInvalidArgument
// if `bytes` is longer than curl takes (INT_MAX); kResourceExhausted if curl
// cannot allocate.
absl::StatusOr<std::string> PercentEncode(absl::string_view bytes);

}  // namespace outbox::workflow

#endif  // OUTBOX_AGENT_EXPR_TEMPLATE_H_
