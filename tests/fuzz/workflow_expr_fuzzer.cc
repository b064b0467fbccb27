// Copyright (c) edge-outbox authors.
//
// Fuzzes the workflow expression layer (agent/workflow/): value references,
// condition evaluation and revert template filling, over arbitrary JSON.
//
// Input: up to six lines (the seeds are written by hand):
//   1 the step's request payload        4 a value reference (condition)
//   2 the response of step "s"          5 an operator name
//   3 a template (URL and payload)      6 the expected value, as JSON
//
// Properties checked besides "no crash, no sanitizer report":
//   - a payload template that parses fills to text that is JSON;
//   - a filled URL template is its literals with, at each placeholder, only
//     unreserved bytes and %XX escapes that decode to the value's text;
//   - a failed fill is kFailedPrecondition; a failed evaluation
//     kInvalidArgument (a document that is not JSON), never a missing value;
//   - exists is true exactly when the value resolves; with no value every
//     other operator is false; eq is reflexive and symmetric, ne its
//     negation; on two numbers or two strings exactly one of lt, "equal",
//     gt holds, gte = gt or equal, lte = lt or equal; on other pairs the
//     ordering operators are false.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "agent/expr/condition.h"
#include "agent/expr/template.h"
#include "agent/expr/value_ref.h"
#include "nlohmann/json.hpp"
#include "tests/fuzz/fuzz_check.h"

namespace {

using Json = nlohmann::json;
using outbox::workflow::Compare;
using outbox::workflow::Operator;
using outbox::workflow::Template;
using outbox::workflow::ValueRef;
using outbox::workflow::ValueResolver;

bool Unreserved(char c) {
  return absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // lowercase is not what the encoder writes
}

// `encoded` decoded, or nullopt if it holds anything but unreserved bytes
// and %XX (uppercase) escapes.
std::optional<std::string> PercentDecode(absl::string_view encoded) {
  std::string out;
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (Unreserved(encoded[i])) {
      out.push_back(encoded[i]);
      continue;
    }
    if (encoded[i] != '%' || i + 2 >= encoded.size() ||
        HexDigit(encoded[i + 1]) < 0 || HexDigit(encoded[i + 2]) < 0) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>(HexDigit(encoded[i + 1]) * 16 +
                                    HexDigit(encoded[i + 2])));
    i += 2;
  }
  return out;
}

void CheckPayload(absl::string_view text, ValueResolver& resolver) {
  absl::StatusOr<Template> tmpl =
      outbox::workflow::ParseTemplate(text, Template::Kind::kPayload);
  if (!tmpl.ok()) {
    FUZZ_CHECK(tmpl.status().code() == absl::StatusCode::kInvalidArgument,
               "ParseTemplate failed with a code other than kInvalidArgument");
    return;
  }
  absl::StatusOr<std::string> filled = outbox::workflow::Fill(*tmpl, resolver);
  if (!filled.ok()) {
    FUZZ_CHECK(filled.status().code() == absl::StatusCode::kFailedPrecondition,
               "a payload fill failed with a code other than "
               "kFailedPrecondition");
    return;
  }
  FUZZ_CHECK(Json::accept(*filled), "a filled payload template is not JSON");
}

void CheckUrl(absl::string_view text, ValueResolver& resolver) {
  absl::StatusOr<Template> tmpl =
      outbox::workflow::ParseTemplate(text, Template::Kind::kUrl);
  if (!tmpl.ok()) return;
  absl::StatusOr<std::string> filled = outbox::workflow::Fill(*tmpl, resolver);
  if (!filled.ok()) {
    FUZZ_CHECK(filled.status().code() == absl::StatusCode::kFailedPrecondition,
               "a URL fill failed with a code other than kFailedPrecondition");
    return;
  }
  // Walk the output part by part: each literal as written, then one
  // placeholder's encoding, which must decode to the value's text.
  absl::string_view rest = *filled;
  for (const Template::Part& part : tmpl->parts) {
    FUZZ_CHECK(absl::StartsWith(rest, part.literal),
               "a URL template's literal text was changed");
    rest.remove_prefix(part.literal.size());
    if (!part.has_ref) continue;
    absl::StatusOr<Json> value = resolver.Resolve(part.ref);
    FUZZ_CHECK(value.ok(), "a URL filled although a value does not resolve");
    const std::string raw =
        value->is_string() ? value->get<std::string>() : value->dump();
    // Every raw byte becomes 1 byte (unreserved) or 3 (%XX).
    size_t length = 0;
    for (char c : raw) length += Unreserved(c) ? 1 : 3;
    FUZZ_CHECK(length <= rest.size(), "a URL value's encoding is cut short");
    const std::optional<std::string> decoded =
        PercentDecode(rest.substr(0, length));
    FUZZ_CHECK(decoded.has_value(),
               "a URL value holds a byte outside the unreserved set");
    FUZZ_CHECK(*decoded == raw, "a URL value does not decode to the value");
    rest.remove_prefix(length);
  }
  FUZZ_CHECK(rest.empty(), "a filled URL has text after its template");
}

void CheckOperators(const std::optional<Json>& v, const Json& x) {
  const auto is = [&](Operator op) { return Compare(op, v, x); };
  FUZZ_CHECK(is(Operator::kExists) == v.has_value(), "exists is wrong");
  if (!v.has_value()) {
    for (Operator op :
         {Operator::kEq, Operator::kNe, Operator::kGt, Operator::kGte,
          Operator::kLt, Operator::kLte, Operator::kContains}) {
      FUZZ_CHECK(!is(op), "an operator other than exists held with no value");
    }
    return;
  }
  FUZZ_CHECK(Compare(Operator::kEq, v, *v), "eq is not reflexive");
  FUZZ_CHECK(is(Operator::kEq) == Compare(Operator::kEq, x, *v),
             "eq is not symmetric");
  FUZZ_CHECK(is(Operator::kNe) == !is(Operator::kEq), "ne is not !eq");
  const bool ordered =
      (v->is_number() && x.is_number()) || (v->is_string() && x.is_string());
  const bool lt = is(Operator::kLt), gt = is(Operator::kGt);
  if (!ordered) {
    FUZZ_CHECK(!lt && !gt && !is(Operator::kLte) && !is(Operator::kGte),
               "an ordering operator held across types");
    return;
  }
  const bool equal = is(Operator::kGte) && is(Operator::kLte);
  FUZZ_CHECK(int{lt} + int{gt} + int{equal} == 1,
             "not exactly one of lt, equal, gt");
  FUZZ_CHECK(is(Operator::kGte) == (gt || equal), "gte is not gt or equal");
  FUZZ_CHECK(is(Operator::kLte) == (lt || equal), "lte is not lt or equal");
}

void CheckCondition(absl::string_view ref_text, absl::string_view op_name,
                    absl::string_view expected_text, ValueResolver& resolver) {
  Json expected = Json::parse(expected_text, nullptr, false);
  if (expected.is_discarded()) expected = Json(std::string(expected_text));
  absl::StatusOr<ValueRef> ref = outbox::workflow::ParseValueRef(ref_text);
  if (!ref.ok()) return;
  absl::StatusOr<Json> value = resolver.Resolve(*ref);
  if (!value.ok() && value.status().code() != absl::StatusCode::kNotFound) {
    FUZZ_CHECK(value.status().code() == absl::StatusCode::kInvalidArgument,
               "Resolve failed with an unexpected code");
    return;
  }
  const std::optional<Json> v =
      value.ok() ? std::optional<Json>(*value) : std::nullopt;
  CheckOperators(v, expected);
  absl::StatusOr<Operator> op = outbox::workflow::ParseOperator(op_name);
  if (!op.ok()) return;
  outbox::workflow::Condition condition{*ref, *op, expected};
  absl::StatusOr<bool> holds = outbox::workflow::Evaluate(condition, resolver);
  FUZZ_CHECK(holds.ok(), "Evaluate failed where Resolve did not");
  FUZZ_CHECK(*holds == Compare(*op, v, expected),
             "Evaluate disagrees with Compare");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<absl::string_view> lines = absl::StrSplit(input, '\n');
  lines.resize(6);
  ValueResolver resolver{std::string(lines[0])};
  resolver.AddResponse("s", std::string(lines[1]));
  CheckPayload(lines[2], resolver);
  CheckUrl(lines[2], resolver);
  CheckCondition(lines[3], lines[4], lines[5], resolver);
  return 0;
}
