// Copyright (c) edge-outbox authors.

#include "agent/expr/condition.h"

#include <array>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace outbox::workflow {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::pair<absl::string_view, Operator>, 8> kOperators = {{
    {"eq", Operator::kEq},
    {"ne", Operator::kNe},
    {"gt", Operator::kGt},
    {"gte", Operator::kGte},
    {"lt", Operator::kLt},
    {"lte", Operator::kLte},
    {"contains", Operator::kContains},
    {"exists", Operator::kExists},
}};

// -1, 0 or 1. REQUIRES: both are numbers. Integers compare exactly (a double
// holds only 53 bits); a float against anything compares as doubles.
int CompareNumbers(const Json& a, const Json& b) {
  auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  if (a.is_number_float() || b.is_number_float()) {
    return sign(a.get<double>(), b.get<double>());
  }
  const bool a_big =
      a.is_number_unsigned() && a.get<uint64_t>() > uint64_t{INT64_MAX};
  const bool b_big =
      b.is_number_unsigned() && b.get<uint64_t>() > uint64_t{INT64_MAX};
  if (a_big || b_big) {
    if (!b_big) return 1;
    if (!a_big) return -1;
    return sign(a.get<uint64_t>(), b.get<uint64_t>());
  }
  return sign(a.get<int64_t>(), b.get<int64_t>());
}

// nlohmann's own == converts mixed number types lossily (it finds the
// unsigned 2^64-1 equal to the signed -1), so equality is spelled out here.
bool Equal(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return CompareNumbers(a, b) == 0;
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Equal(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !Equal(*it, *other)) return false;
    }
    return true;
  }
  return a == b;
}

// Order of `a` against `b` when both are numbers or both strings.
std::optional<int> Order(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return CompareNumbers(a, b);
  if (a.is_string() && b.is_string()) {
    const int c = a.get_ref<const std::string&>().compare(
        b.get_ref<const std::string&>());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  return std::nullopt;
}

bool Contains(const Json& value, const Json& expected) {
  if (value.is_string() && expected.is_string()) {
    return value.get_ref<const std::string&>().find(
               expected.get_ref<const std::string&>()) != std::string::npos;
  }
  if (value.is_array()) {
    for (const Json& element : value) {
      if (Equal(element, expected)) return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<Operator> ParseOperator(absl::string_view name) {
  for (const auto& [text, op] : kOperators) {
    if (text == name) return op;
  }
  std::vector<absl::string_view> names;
  for (const auto& entry : kOperators) names.push_back(entry.first);
  return absl::InvalidArgumentError(
      absl::StrCat("\"", name, "\" is not an operator; there are ",
                   absl::StrJoin(names, ", ")));
}

absl::string_view OperatorName(Operator op) {
  for (const auto& [text, known] : kOperators) {
    if (known == op) return text;
  }
  return "unknown";
}

bool Compare(Operator op, const std::optional<Json>& value,
             const Json& expected) {
  if (op == Operator::kExists) return value.has_value();
  if (!value.has_value()) return false;
  const std::optional<int> order = Order(*value, expected);
  switch (op) {
    case Operator::kEq:
      return Equal(*value, expected);
    case Operator::kNe:
      return !Equal(*value, expected);
    case Operator::kGt:
      return order.has_value() && *order > 0;
    case Operator::kGte:
      return order.has_value() && *order >= 0;
    case Operator::kLt:
      return order.has_value() && *order < 0;
    case Operator::kLte:
      return order.has_value() && *order <= 0;
    case Operator::kContains:
      return Contains(*value, expected);
    case Operator::kExists:
      break;
  }
  return false;
}

absl::StatusOr<bool> Evaluate(const Condition& condition,
                              ValueResolver& resolver) {
  absl::StatusOr<Json> value = resolver.Resolve(condition.ref);
  if (!value.ok() && value.status().code() != absl::StatusCode::kNotFound) {
    return value.status();
  }
  return Compare(
      condition.op,
      value.ok() ? std::optional<Json>(*std::move(value)) : std::nullopt,
      condition.expected);
}

absl::StatusOr<std::optional<size_t>> ChooseDestination(
    const std::vector<Choice>& choices, ValueResolver& resolver) {
  for (size_t i = 0; i < choices.size(); ++i) {
    bool all = true;
    for (const Condition& condition : choices[i].conditions) {
      absl::StatusOr<bool> holds = Evaluate(condition, resolver);
      if (!holds.ok()) return holds.status();
      if (!*holds) {
        all = false;
        break;
      }
    }
    if (all) return i;
  }
  return std::nullopt;
}

}  // namespace outbox::workflow
